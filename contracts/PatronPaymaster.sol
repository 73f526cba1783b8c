// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";
import {Ownable2Step} from "@openzeppelin/contracts/access/Ownable2Step.sol";
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";
import {EnumerableSet} from "@openzeppelin/contracts/utils/structs/EnumerableSet.sol";
import {Math} from "@openzeppelin/contracts/utils/math/Math.sol";
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

/// EntryPoint v0.6's IPaymaster.PostOpMode: the op succeeded, the op reverted, or the first postOp reverted
/// (then the EntryPoint has undone the op's execution and calls postOp once more, outside it).
enum PostOpMode {
    opSucceeded,
    opReverted,
    postOpReverted
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
/// @notice A hybrid paymaster: byte 20 of `paymasterAndData` selects the mode. Mode 0 (sponsored): the paymaster
/// pays, authorised by an off-chain signature of the Patron service. Mode 1 (token): the paymaster pays the
/// EntryPoint and charges the account in an ERC-20, at an exchange rate signed by the service; validation takes the
/// signed maximum from the account (prefund) and postOp refunds what the op did not cost, so the charge cannot
/// fail after validation. Mode 2 (token, guaranteed): the same fields, for an op whose approval is batched in its
/// own callData (it runs after validation, so it cannot be prefunded): validation prefunds when the allowance is
/// already in place, else checks the balance and the batched approval, and postOp collects the charge (a failure
/// is recorded in `unpaidCharges`); the service signs it only within the dApp's sponsorship policy.
/// @dev All integers big-endian, all signatures EIP-191 (`toEthSignedMessageHash`) by one of the paymaster's signers (`isSigner`).
/// Sponsored `paymasterAndData` (98 bytes):
///   [0:20] paymaster | [20] mode = 0 | [21:27] uint48 validUntil | [27:33] uint48 validAfter | [33:98] r||s||v
///   sponsoredHash = keccak256(abi.encode(opHash, chainid, address(this), uint8 0, validUntil, validAfter))
/// Token `paymasterAndData` (154 bytes):
///   [0:20] paymaster | [20] mode = 1 or 2 | [21:27] validUntil | [27:33] validAfter | [33:53] token
///   | [53:69] uint128 exchangeRate | [69:73] uint32 priceMarkup | [73:89] uint128 maxTokenCost | [89:154] r||s||v
///   tokenHash = keccak256(abi.encode(opHash, chainid, address(this), uint8 mode (1 or 2), validUntil, validAfter,
///               token, exchangeRate, priceMarkup, maxTokenCost))
/// opHash = keccak256(abi.encode(sender, nonce, keccak256(initCode), keccak256(callData), callGasLimit,
///          verificationGasLimit, preVerificationGas, maxFeePerGas, maxPriorityFeePerGas))
/// Every field the paymaster pays for is signed, so a bundler cannot inflate gas after approval. Replay is
/// prevented by the account nonce (in opHash) instead of a paymaster nonce, so the service needs no chain
/// read to sign and may sign several ops of one sender in parallel.
/// Token charge (rounded up, in the paymaster's favour), never more than the signed maxTokenCost:
///   charge = ceil((actualGasCost + POST_OP_OVERHEAD * gasPrice) * exchangeRate * priceMarkup / (1e18 * 1e6))
///   exchangeRate: token base units per 1e18 wei; priceMarkup: parts per million (1e6 = no premium).
/// Staking: the signer set and `feeReceiver` are storage reads, the token mode's prefund writes the token's
/// storage associated with the paymaster, and the token mode returns a context; ERC-7562 (STO-031, EREP-050) lets
/// bundlers accept all three only from a staked paymaster, hence `addStake`. The token context is 8 words.
contract PatronPaymaster is Ownable2Step {
    using SafeERC20 for IERC20;
    using EnumerableSet for EnumerableSet.AddressSet;

    uint8 public constant MODE_SPONSORED = 0;
    uint8 public constant MODE_TOKEN = 1;
    uint8 public constant MODE_TOKEN_GUARANTEED = 2;

    /// Gas the token mode's postOp and the EntryPoint's work after it use, which the `actualGasCost` handed to
    /// postOp does not include yet; it is charged at the op's gas price. Measured on the contract tests (postOp
    /// with an ERC-20 transfer to a fee receiver that holds no balance yet ≈ 40k); the service quotes with it.
    uint256 public constant POST_OP_OVERHEAD = 50_000;
    /// priceMarkup bounds: 1e6 is the plain exchange rate, 2e6 doubles it (a 100 % premium).
    uint32 public constant MIN_PRICE_MARKUP = 1e6;
    uint32 public constant MAX_PRICE_MARKUP = 2e6;

    uint256 private constant MODE_OFFSET = 20;
    uint256 private constant VALID_UNTIL_OFFSET = 21;
    uint256 private constant VALID_AFTER_OFFSET = 27;
    uint256 private constant SIGNATURE_OFFSET = 33;
    uint256 private constant SPONSORED_LENGTH = 98;
    uint256 private constant TOKEN_OFFSET = 33;
    uint256 private constant RATE_OFFSET = 53;
    uint256 private constant MARKUP_OFFSET = 69;
    uint256 private constant MAX_COST_OFFSET = 73;
    uint256 private constant TOKEN_SIGNATURE_OFFSET = 89;
    uint256 private constant TOKEN_LENGTH = 154;
    /// ERC-20 approve(address,uint256)
    bytes4 private constant APPROVE_SELECTOR = 0x095ea7b3;

    /// ERC-4337 validationData: bit 0 (the low 160-bit "aggregator" field = 1) means signature failure.
    uint256 private constant SIG_VALIDATION_FAILED = 1;

    IEntryPoint public immutable entryPoint;
    /// Receives the token mode's charges.
    address public feeReceiver;
    /// The keys whose signatures the paymaster accepts. More than one so that a key is rotated with an overlap:
    /// the owner adds the new key, the service's instances move to it, and the owner removes the old one, with no
    /// moment at which the signatures being issued are refused. Own storage: a bundler allows its read.
    EnumerableSet.AddressSet private _signers;
    /// Token charges that could not be collected (the account's approval or balance was gone when postOp ran
    /// after its execution had been reverted): account => token => amount. Anyone may collect them later with
    /// `collectUnpaidCharge`; the Patron service refuses token mode to an account that owes one.
    mapping(address account => mapping(address token => uint256 amount)) public unpaidCharges;

    event SignerAdded(address indexed signer);
    event SignerRemoved(address indexed signer);
    event FeeReceiverChanged(address indexed previousReceiver, address indexed newReceiver);
    /// A token-mode op was charged `charge` of `token` for `actualGasCost` wei of gas.
    event TokenCharged(address indexed account, address indexed token, uint256 charge, uint256 actualGasCost);
    /// The charge of a token-mode op could not be collected; it is recorded in `unpaidCharges`.
    event TokenChargeFailed(address indexed account, address indexed token, uint256 charge, uint256 actualGasCost);
    event UnpaidChargeCollected(address indexed account, address indexed token, uint256 amount);

    error NotEntryPoint(address caller);
    error ZeroAddress();
    error SignerAlreadyAdded(address signer);
    error NotASigner(address signer);
    error UnknownMode(uint8 mode);
    error InvalidPaymasterDataLength(uint256 length, uint256 expected);
    error RenounceOwnershipDisabled();
    error PriceMarkupOutOfRange(uint32 priceMarkup);
    error NothingToCollect();

    modifier onlyEntryPoint() {
        if (msg.sender != address(entryPoint)) revert NotEntryPoint(msg.sender);
        _;
    }

    constructor(IEntryPoint entryPoint_, address owner_, address signer_) Ownable(owner_) {
        if (address(entryPoint_) == address(0) || signer_ == address(0)) revert ZeroAddress();
        entryPoint = entryPoint_;
        _signers.add(signer_);
        feeReceiver = owner_;
        emit SignerAdded(signer_);
        emit FeeReceiverChanged(address(0), owner_);
    }

    // ---------------------------------------------------------------- ERC-4337 IPaymaster (v0.6)

    /// @notice Called by the EntryPoint during validation. A wrong signature returns SIG_VALIDATION_FAILED
    /// (AA34) and the time window goes into validationData (AA32), as ERC-4337 requires so bundlers can
    /// simulate without reverting. It reverts (the EntryPoint reports AA33 with the reason) on data it cannot
    /// parse and, in token mode, when the account cannot pay the signed maximum. The token modes write state
    /// (the prefund).
    function validatePaymasterUserOp(UserOperation calldata userOp, bytes32, /* userOpHash */ uint256 /* maxCost */ )
        external
        onlyEntryPoint
        returns (bytes memory context, uint256 validationData)
    {
        bytes calldata data = userOp.paymasterAndData;
        if (data.length <= MODE_OFFSET) revert InvalidPaymasterDataLength(data.length, SPONSORED_LENGTH);
        uint8 mode = uint8(data[MODE_OFFSET]);
        if (mode == MODE_SPONSORED) return _validateSponsored(userOp, data);
        if (mode == MODE_TOKEN || mode == MODE_TOKEN_GUARANTEED) return _validateToken(userOp, data, mode);
        revert UnknownMode(mode);
    }

    /// @notice v0.6 calls postOp only when validation returned a context: the token mode's, never the
    /// sponsored mode's. It charges the account; see `_postOpToken`.
    function postOp(PostOpMode mode, bytes calldata context, uint256 actualGasCost) external onlyEntryPoint {
        _postOpToken(mode, context, actualGasCost);
    }

    // ---------------------------------------------------------------- hashes (shared with the TS service)

    /// @notice The hash the verifying signer signs (EIP-191) for a sponsored operation.
    function getSponsoredHash(UserOperation calldata userOp, uint48 validUntil, uint48 validAfter)
        external
        view
        returns (bytes32)
    {
        return _sponsoredHash(userOp, validUntil, validAfter);
    }

    /// @notice The hash the verifying signer signs (EIP-191) for a token-mode operation of `mode` (1 or 2).
    function getTokenHash(
        UserOperation calldata userOp,
        uint8 mode,
        uint48 validUntil,
        uint48 validAfter,
        address token,
        uint128 exchangeRate,
        uint32 priceMarkup,
        uint128 maxTokenCost
    ) external view returns (bytes32) {
        return _tokenHash(userOp, mode, validUntil, validAfter, token, exchangeRate, priceMarkup, maxTokenCost);
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

    function _tokenHash(
        UserOperation calldata userOp,
        uint8 mode,
        uint48 validUntil,
        uint48 validAfter,
        address token,
        uint128 exchangeRate,
        uint32 priceMarkup,
        uint128 maxTokenCost
    ) internal view returns (bytes32) {
        return keccak256(
            abi.encode(
                _opHash(userOp),
                block.chainid,
                address(this),
                mode,
                validUntil,
                validAfter,
                token,
                exchangeRate,
                priceMarkup,
                maxTokenCost
            )
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
        bool sigFailed = !_isSignedBy(digest, data[SIGNATURE_OFFSET:]);
        // Empty context: v0.6 then skips postOp entirely, saving its gas.
        return ("", _packValidationData(sigFailed, validUntil, validAfter));
    }

    // ---------------------------------------------------------------- mode 1: token

    struct TokenData {
        uint48 validUntil;
        uint48 validAfter;
        address token;
        uint128 exchangeRate;
        uint32 priceMarkup;
        uint128 maxTokenCost;
    }

    function _decodeToken(bytes calldata data) internal pure returns (TokenData memory d) {
        if (data.length != TOKEN_LENGTH) revert InvalidPaymasterDataLength(data.length, TOKEN_LENGTH);
        d.validUntil = uint48(bytes6(data[VALID_UNTIL_OFFSET:VALID_AFTER_OFFSET]));
        d.validAfter = uint48(bytes6(data[VALID_AFTER_OFFSET:TOKEN_OFFSET]));
        d.token = address(bytes20(data[TOKEN_OFFSET:RATE_OFFSET]));
        d.exchangeRate = uint128(bytes16(data[RATE_OFFSET:MARKUP_OFFSET]));
        d.priceMarkup = uint32(bytes4(data[MARKUP_OFFSET:MAX_COST_OFFSET]));
        d.maxTokenCost = uint128(bytes16(data[MAX_COST_OFFSET:TOKEN_SIGNATURE_OFFSET]));
    }

    /// The signature (the mode byte included) is checked first: a tampered op fails as AA34 whatever its token
    /// says. Then the account pays:
    /// - mode 1: the signed maximum moves from the account to the paymaster now (`transferFrom`, which needs an
    ///   allowance already in place and the balance); an account that cannot pay reverts here (AA33);
    /// - mode 2: the same prefund when the allowance is already in place; otherwise the balance and an
    ///   `approve(paymaster, >= maxTokenCost)` inside its own callData (batched with the user's call, it runs after
    ///   validation and before postOp), and postOp collects the charge.
    function _validateToken(UserOperation calldata userOp, bytes calldata data, uint8 mode)
        internal
        returns (bytes memory, uint256)
    {
        TokenData memory d = _decodeToken(data);
        if (d.priceMarkup < MIN_PRICE_MARKUP || d.priceMarkup > MAX_PRICE_MARKUP) {
            revert PriceMarkupOutOfRange(d.priceMarkup);
        }
        bytes32 digest = MessageHashUtils.toEthSignedMessageHash(
            _tokenHash(userOp, mode, d.validUntil, d.validAfter, d.token, d.exchangeRate, d.priceMarkup, d.maxTokenCost)
        );
        if (!_isSignedBy(digest, data[TOKEN_SIGNATURE_OFFSET:])) {
            return ("", _packValidationData(true, d.validUntil, d.validAfter));
        }
        IERC20 token = IERC20(d.token);
        bool prefunded = mode == MODE_TOKEN || token.allowance(userOp.sender, address(this)) >= d.maxTokenCost;
        if (prefunded) {
            if (!token.trySafeTransferFrom(userOp.sender, address(this), d.maxTokenCost)) _refusePrefund(userOp, d);
        } else {
            require(token.balanceOf(userOp.sender) >= d.maxTokenCost, "Patron: token balance below the maximum charge");
            require(
                _approvesPaymaster(userOp.callData, d.maxTokenCost), "Patron: token allowance below the maximum charge"
            );
        }
        return (_tokenContext(userOp, d, prefunded), _packValidationData(false, d.validUntil, d.validAfter));
    }

    function _tokenContext(UserOperation calldata userOp, TokenData memory d, bool prefunded)
        internal
        pure
        returns (bytes memory)
    {
        return abi.encode(
            TokenContext(
                userOp.sender,
                d.token,
                d.exchangeRate,
                d.priceMarkup,
                d.maxTokenCost,
                userOp.maxFeePerGas,
                userOp.maxPriorityFeePerGas,
                prefunded
            )
        );
    }

    /// Why the prefund failed, as precisely as it can be said (AA33 with the reason).
    function _refusePrefund(UserOperation calldata userOp, TokenData memory d) internal view {
        IERC20 token = IERC20(d.token);
        require(token.balanceOf(userOp.sender) >= d.maxTokenCost, "Patron: token balance below the maximum charge");
        require(
            token.allowance(userOp.sender, address(this)) >= d.maxTokenCost,
            "Patron: token allowance below the maximum charge"
        );
        revert("Patron: token prefund failed");
    }

    /// Whether callData carries `approve(address(this), amount >= minAmount)`. Account call formats (SimpleAccount
    /// `execute`/`executeBatch`, Biconomy's `execute_ncC`/`executeBatch_y6U`, ...) ABI-encode inner calls as
    /// `bytes`, whose contents start on a 32-byte boundary after the 4-byte selector: so only offsets 4 + 32k
    /// are inspected. Which token the approval goes to is not checked here (the account's encoding of targets
    /// varies): an approval of the wrong token fails the charge in postOp and is recorded as unpaid, and the
    /// service simulates every token op before signing to refuse exactly that.
    function _approvesPaymaster(bytes calldata callData, uint256 minAmount) internal view returns (bool) {
        bytes32 spender = bytes32(uint256(uint160(address(this))));
        uint256 end = callData.length;
        for (uint256 i = 4; i + 68 <= end; i += 32) {
            if (
                bytes4(callData[i:i + 4]) == APPROVE_SELECTOR && bytes32(callData[i + 4:i + 36]) == spender
                    && uint256(bytes32(callData[i + 36:i + 68])) >= minAmount
            ) return true;
        }
        return false;
    }

    /// The charge for `actualGasCost`: plus POST_OP_OVERHEAD at the op's gas price (what the EntryPoint uses:
    /// min(maxFeePerGas, maxPriorityFeePerGas + basefee)), converted and marked up, rounded up, capped by the
    /// signed maximum. `TokenCharged` reports the amount finally kept.
    /// - Prefunded (mode 1, and mode 2 with an allowance in place): the paymaster holds the maximum; it refunds
    ///   `maxTokenCost - charge` to the account and pays `charge` to the fee receiver, in every PostOpMode. This
    ///   never reverts: a refund the token refuses leaves the whole maximum with the paymaster (the op is then
    ///   charged its maximum), a payment to the fee receiver the token refuses leaves the charge with the paymaster
    ///   (the owner takes it with `withdrawTokens`). A first postOp that runs out of gas is undone by the
    ///   EntryPoint, which calls again with postOpReverted; the prefund is still there and the same happens.
    /// - Not prefunded (mode 2 with the approval in callData), first call (opSucceeded / opReverted): a failed
    ///   transfer reverts, so the EntryPoint undoes the op's execution and calls again with postOpReverted; an op
    ///   whose fee cannot be collected does not get to keep its effects. That second call must not revert (v0.6
    ///   would revert the whole bundle with AA50): it tries once more and, failing, records the charge as unpaid and
    ///   emits TokenChargeFailed. The EntryPoint has charged the paymaster's deposit for the gas either way.
    function _postOpToken(PostOpMode mode, bytes calldata context, uint256 actualGasCost) internal {
        TokenContext memory c = abi.decode(context, (TokenContext));
        uint256 charge = _charge(c, actualGasCost);
        address account = c.account;
        address token = c.token;
        uint256 maxTokenCost = c.maxTokenCost;
        address receiver = feeReceiver;
        if (c.prefunded) {
            if (charge < maxTokenCost && !IERC20(token).trySafeTransfer(account, maxTokenCost - charge)) {
                charge = maxTokenCost;
            }
            IERC20(token).trySafeTransfer(receiver, charge);
            emit TokenCharged(account, token, charge, actualGasCost);
            return;
        }
        if (mode != PostOpMode.postOpReverted) {
            IERC20(token).safeTransferFrom(account, receiver, charge);
            emit TokenCharged(account, token, charge, actualGasCost);
            return;
        }
        if (_tryTransferFrom(token, account, receiver, charge)) {
            emit TokenCharged(account, token, charge, actualGasCost);
        } else {
            unpaidCharges[account][token] += charge;
            emit TokenChargeFailed(account, token, charge, actualGasCost);
        }
    }

    /// What validation hands postOp (abi-encoded, 8 words).
    struct TokenContext {
        address account;
        address token;
        uint128 exchangeRate;
        uint32 priceMarkup;
        uint128 maxTokenCost;
        uint256 maxFeePerGas;
        uint256 maxPriorityFeePerGas;
        bool prefunded;
    }

    function _charge(TokenContext memory c, uint256 actualGasCost) internal view returns (uint256) {
        uint256 gasPrice = c.maxFeePerGas == c.maxPriorityFeePerGas
            ? c.maxFeePerGas
            : Math.min(c.maxFeePerGas, c.maxPriorityFeePerGas + block.basefee);
        uint256 charge = Math.mulDiv(
            actualGasCost + POST_OP_OVERHEAD * gasPrice,
            uint256(c.exchangeRate) * c.priceMarkup,
            1e24,
            Math.Rounding.Ceil
        );
        return charge > c.maxTokenCost ? c.maxTokenCost : charge;
    }

    /// transferFrom that reports failure instead of reverting (no return value counts as success, as
    /// SafeERC20 does for tokens that return nothing).
    function _tryTransferFrom(address token, address from, address to, uint256 amount) internal returns (bool) {
        (bool ok, bytes memory ret) = token.call(abi.encodeCall(IERC20.transferFrom, (from, to, amount)));
        // A return value other than exactly `true` is a failure; decoding it as uint256 cannot revert.
        return ok && (ret.length == 0 ? token.code.length > 0 : (ret.length == 32 && abi.decode(ret, (uint256)) == 1));
    }

    /// Collects a recorded unpaid charge from the account (which must have approved it again); anyone may
    /// call it, the tokens go to the fee receiver.
    function collectUnpaidCharge(address account, address token) external {
        uint256 amount = unpaidCharges[account][token];
        if (amount == 0) revert NothingToCollect();
        unpaidCharges[account][token] = 0;
        IERC20(token).safeTransferFrom(account, feeReceiver, amount);
        emit UnpaidChargeCollected(account, token, amount);
    }

    // ---------------------------------------------------------------- helpers

    /// tryRecover (not recover) so that a malformed signature (bad v, high s, r = 0) is a plain failure:
    /// reverting would turn a bad signature into AA33 and hide it from the bundler's simulation.
    function _isSignedBy(bytes32 digest, bytes calldata signature) internal view returns (bool) {
        bytes32 r = bytes32(signature[0:32]);
        bytes32 s = bytes32(signature[32:64]);
        uint8 v = uint8(signature[64]);
        (address recovered, ECDSA.RecoverError err,) = ECDSA.tryRecover(digest, v, r, s);
        return err == ECDSA.RecoverError.NoError && _signers.contains(recovered);
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

    /// Adds a key whose signatures the paymaster accepts (the first step of a rotation: data it signs is valid
    /// from the next block on, while the keys already there stay valid).
    function addSigner(address signer) external onlyOwner {
        if (signer == address(0)) revert ZeroAddress();
        if (!_signers.add(signer)) revert SignerAlreadyAdded(signer);
        emit SignerAdded(signer);
    }

    /// Removes a key: everything it signed fails (AA34) from the next block on, even inside its validity window.
    /// Removing the last key is allowed on purpose: it stops all sponsorship at once (the owner's emergency stop).
    function removeSigner(address signer) external onlyOwner {
        if (!_signers.remove(signer)) revert NotASigner(signer);
        emit SignerRemoved(signer);
    }

    function isSigner(address signer) external view returns (bool) {
        return _signers.contains(signer);
    }

    /// Every key the paymaster accepts, in no particular order (a set kept small by its owner).
    function signers() external view returns (address[] memory) {
        return _signers.values();
    }

    function setFeeReceiver(address newReceiver) external onlyOwner {
        if (newReceiver == address(0)) revert ZeroAddress();
        emit FeeReceiverChanged(feeReceiver, newReceiver);
        feeReceiver = newReceiver;
    }

    /// Tokens the paymaster holds outside a bundle: charges and refunds a token refused to move in postOp.
    function withdrawTokens(IERC20 token, address to, uint256 amount) external onlyOwner {
        if (to == address(0)) revert ZeroAddress();
        token.safeTransfer(to, amount);
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
