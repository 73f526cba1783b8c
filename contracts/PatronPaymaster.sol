// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";
import {Ownable2Step} from "@openzeppelin/contracts/access/Ownable2Step.sol";
import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";
import {MessageHashUtils} from "@openzeppelin/contracts/utils/cryptography/MessageHashUtils.sol";

/// The ERC-4337 v0.6 user operation, declared here (not imported from the GPL eth-infinitism sources) so this
/// file stays MIT. Field order and types must match EntryPoint v0.6 exactly: the EntryPoint ABI-encodes this
/// struct when it calls `validatePaymasterUserOp`. https://eips.ethereum.org/EIPS/eip-4337
struct UserOperation {
    address sender;
    uint256 nonce;
    bytes initCode;
    bytes callData;
    uint256 callGasLimit;
    uint256 verificationGasLimit;
    uint256 preVerificationGas;
    uint256 maxFeePerGas;
    uint256 maxPriorityFeePerGas;
    bytes paymasterAndData;
    bytes signature;
}

/// The subset of EntryPoint v0.6 (its StakeManager part) that the paymaster calls.
interface IEntryPoint {
    function depositTo(address account) external payable;
    function withdrawTo(address payable withdrawAddress, uint256 withdrawAmount) external;
    function balanceOf(address account) external view returns (uint256);
    function addStake(uint32 unstakeDelaySec) external payable;
    function unlockStake() external;
    function withdrawStake(address payable withdrawAddress) external;
}

/// @title Patron's paymaster for EntryPoint v0.6.
/// @notice A hybrid paymaster: byte 20 of `paymasterAndData` selects the mode. Only mode 0 (sponsored: the
/// paymaster pays, authorised by an off-chain signature of the Patron service) exists today. A token mode
/// (1) will be a new branch in `validatePaymasterUserOp`, a new hash function reusing `_opHash`, and a
/// `postOp` body; the sponsored path does not change.
/// @dev Sponsored `paymasterAndData` (98 bytes), all integers big-endian:
///   [0:20] paymaster | [20] mode = 0 | [21:27] uint48 validUntil | [27:33] uint48 validAfter | [33:98] r||s||v
/// The signature is EIP-191 (`toEthSignedMessageHash`) over
///   sponsoredHash = keccak256(abi.encode(opHash, chainid, address(this), uint8 mode, validUntil, validAfter))
///   opHash = keccak256(abi.encode(sender, nonce, keccak256(initCode), keccak256(callData), callGasLimit,
///            verificationGasLimit, preVerificationGas, maxFeePerGas, maxPriorityFeePerGas))
/// Every field the sponsor pays for is signed, so a bundler cannot inflate gas after approval. Replay is
/// prevented by the account nonce (in opHash) instead of a paymaster nonce, so the service needs no chain
/// read to sign and may sign several ops of one sender in parallel.
/// Note: `verifyingSigner` is a storage read during validation; ERC-7562 (STO-031) lets bundlers accept that
/// only from a staked paymaster, hence `addStake`.
contract PatronPaymaster is Ownable2Step {
    uint8 public constant MODE_SPONSORED = 0;

    uint256 private constant MODE_OFFSET = 20;
    uint256 private constant VALID_UNTIL_OFFSET = 21;
    uint256 private constant VALID_AFTER_OFFSET = 27;
    uint256 private constant SIGNATURE_OFFSET = 33;
    uint256 private constant SPONSORED_LENGTH = 98;

    /// ERC-4337 validationData: bit 0 (the low 160-bit "aggregator" field = 1) means signature failure.
    uint256 private constant SIG_VALIDATION_FAILED = 1;

    IEntryPoint public immutable entryPoint;
    address public verifyingSigner;

    event VerifyingSignerChanged(address indexed previousSigner, address indexed newSigner);

    error NotEntryPoint(address caller);
    error ZeroAddress();
    error UnknownMode(uint8 mode);
    error InvalidPaymasterDataLength(uint256 length, uint256 expected);
    error RenounceOwnershipDisabled();

    modifier onlyEntryPoint() {
        if (msg.sender != address(entryPoint)) revert NotEntryPoint(msg.sender);
        _;
    }

    constructor(IEntryPoint entryPoint_, address owner_, address verifyingSigner_) Ownable(owner_) {
        if (address(entryPoint_) == address(0) || verifyingSigner_ == address(0)) revert ZeroAddress();
        entryPoint = entryPoint_;
        verifyingSigner = verifyingSigner_;
        emit VerifyingSignerChanged(address(0), verifyingSigner_);
    }

    // ---------------------------------------------------------------- ERC-4337 IPaymaster (v0.6)

    /// @notice Called by the EntryPoint during validation. Reverts only on data it cannot parse (the
    /// EntryPoint reports AA33); a wrong signature returns SIG_VALIDATION_FAILED (AA34) and the time window
    /// goes into validationData (AA32), as ERC-4337 requires so bundlers can simulate without reverting.
    /// @dev `view` while only the sponsored mode exists; the token mode will use the third parameter (maxCost)
    /// to check the account's token allowance and balance, and return a context for postOp.
    function validatePaymasterUserOp(UserOperation calldata userOp, bytes32, /* userOpHash */ uint256 /* maxCost */ )
        external
        view
        onlyEntryPoint
        returns (bytes memory context, uint256 validationData)
    {
        bytes calldata data = userOp.paymasterAndData;
        if (data.length <= MODE_OFFSET) revert InvalidPaymasterDataLength(data.length, SPONSORED_LENGTH);
        uint8 mode = uint8(data[MODE_OFFSET]);
        if (mode == MODE_SPONSORED) return _validateSponsored(userOp, data);
        revert UnknownMode(mode);
    }

    /// @notice Post-operation hook. v0.6 calls it only when validation returned a non-empty context, and the
    /// sponsored mode returns none, so today it never runs. It is the place where the token mode will charge
    /// the account in ERC-20 after execution (mode, context, actualGasCost).
    function postOp(uint8, /* mode */ bytes calldata, /* context */ uint256 /* actualGasCost */ )
        external
        view
        onlyEntryPoint
    {}

    // ---------------------------------------------------------------- hashes (shared with the TS service)

    /// @notice The hash the verifying signer signs (EIP-191) for a sponsored operation.
    function getSponsoredHash(UserOperation calldata userOp, uint48 validUntil, uint48 validAfter)
        external
        view
        returns (bytes32)
    {
        return _sponsoredHash(userOp, validUntil, validAfter);
    }

    /// Every gas and fee field plus the account nonce; `paymasterAndData` and `signature` are excluded
    /// because they contain the signature itself. Kept separate so other modes reuse it.
    function _opHash(UserOperation calldata userOp) internal pure returns (bytes32) {
        return keccak256(
            abi.encode(
                userOp.sender,
                userOp.nonce,
                keccak256(userOp.initCode),
                keccak256(userOp.callData),
                userOp.callGasLimit,
                userOp.verificationGasLimit,
                userOp.preVerificationGas,
                userOp.maxFeePerGas,
                userOp.maxPriorityFeePerGas
            )
        );
    }

    /// chainid and address(this) bind the signature to one deployment; the mode byte keeps a signature for
    /// one mode from being replayed in another.
    function _sponsoredHash(UserOperation calldata userOp, uint48 validUntil, uint48 validAfter)
        internal
        view
        returns (bytes32)
    {
        return keccak256(
            abi.encode(_opHash(userOp), block.chainid, address(this), MODE_SPONSORED, validUntil, validAfter)
        );
    }

    // ---------------------------------------------------------------- mode 0: sponsored

    function _validateSponsored(UserOperation calldata userOp, bytes calldata data)
        internal
        view
        returns (bytes memory, uint256)
    {
        if (data.length != SPONSORED_LENGTH) revert InvalidPaymasterDataLength(data.length, SPONSORED_LENGTH);
        uint48 validUntil = uint48(bytes6(data[VALID_UNTIL_OFFSET:VALID_AFTER_OFFSET]));
        uint48 validAfter = uint48(bytes6(data[VALID_AFTER_OFFSET:SIGNATURE_OFFSET]));
        bytes32 digest = MessageHashUtils.toEthSignedMessageHash(_sponsoredHash(userOp, validUntil, validAfter));
        bool sigFailed = !_isSignedBy(digest, data[SIGNATURE_OFFSET:], verifyingSigner);
        // Empty context: v0.6 then skips postOp entirely, saving its gas.
        return ("", _packValidationData(sigFailed, validUntil, validAfter));
    }

    // ---------------------------------------------------------------- helpers

    /// tryRecover (not recover) so that a malformed signature (bad v, high s, r = 0) is a plain failure:
    /// reverting would turn a bad signature into AA33 and hide it from the bundler's simulation.
    function _isSignedBy(bytes32 digest, bytes calldata signature, address signer) internal pure returns (bool) {
        bytes32 r = bytes32(signature[0:32]);
        bytes32 s = bytes32(signature[32:64]);
        uint8 v = uint8(signature[64]);
        (address recovered, ECDSA.RecoverError err,) = ECDSA.tryRecover(digest, v, r, s);
        return err == ECDSA.RecoverError.NoError && recovered == signer;
    }

    /// ERC-4337 validationData layout: sigFailed (160 bits) | validUntil (48) | validAfter (48).
    function _packValidationData(bool sigFailed, uint48 validUntil, uint48 validAfter)
        internal
        pure
        returns (uint256)
    {
        return (sigFailed ? SIG_VALIDATION_FAILED : 0) | (uint256(validUntil) << 160) | (uint256(validAfter) << 208);
    }

    // ---------------------------------------------------------------- administration

    /// Rotates the service's signing key; data signed by the old key fails (AA34) from the next block on.
    function setVerifyingSigner(address newSigner) external onlyOwner {
        if (newSigner == address(0)) revert ZeroAddress();
        emit VerifyingSignerChanged(verifyingSigner, newSigner);
        verifyingSigner = newSigner;
    }

    /// Without an owner nobody could withdraw the deposit or stake, so renouncing is refused.
    function renounceOwnership() public view override onlyOwner {
        revert RenounceOwnershipDisabled();
    }

    // ---------------------------------------------------------------- EntryPoint deposit and stake

    /// Anyone may top up the deposit the EntryPoint charges for sponsored operations.
    function deposit() external payable {
        entryPoint.depositTo{value: msg.value}(address(this));
    }

    function getDeposit() external view returns (uint256) {
        return entryPoint.balanceOf(address(this));
    }

    function withdrawTo(address payable withdrawAddress, uint256 amount) external onlyOwner {
        entryPoint.withdrawTo(withdrawAddress, amount);
    }

    /// Stake is not needed by handleOps itself but by bundlers' reputation rules (ERC-7562).
    function addStake(uint32 unstakeDelaySec) external payable onlyOwner {
        entryPoint.addStake{value: msg.value}(unstakeDelaySec);
    }

    function unlockStake() external onlyOwner {
        entryPoint.unlockStake();
    }

    function withdrawStake(address payable withdrawAddress) external onlyOwner {
        entryPoint.withdrawStake(withdrawAddress);
    }
}
