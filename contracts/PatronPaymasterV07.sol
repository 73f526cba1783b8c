// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {Paymaster} from "@openzeppelin/contracts/account/paymaster/Paymaster.sol";
import {EIP7702Utils} from "@openzeppelin/contracts/account/utils/EIP7702Utils.sol";
import {ERC4337Utils} from "@openzeppelin/contracts/account/utils/ERC4337Utils.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";
import {Ownable2Step} from "@openzeppelin/contracts/access/Ownable2Step.sol";
import {IEntryPoint, PackedUserOperation} from "@openzeppelin/contracts/interfaces/IERC4337.sol";
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";
import {EnumerableSet} from "@openzeppelin/contracts/utils/structs/EnumerableSet.sol";
import {MessageHashUtils} from "@openzeppelin/contracts/utils/cryptography/MessageHashUtils.sol";
import {Math} from "@openzeppelin/contracts/utils/math/Math.sol";

/// The EIP-2612 permit with a `bytes` signature of Circle's FiatToken v2.2 (USDC), which checks an owner with code
/// by ERC-1271 and reads no TIMESTAMP at the maximum deadline (what the permit mode needs: contracts/README.md).
interface IBytesPermit {
    function permit(address owner, address spender, uint256 value, uint256 deadline, bytes calldata signature)
        external;
}

/// @title Patron's paymaster for EntryPoint v0.7, v0.8 and v0.9.
/// @notice The PackedUserOperation counterpart of PatronPaymaster (v0.6), one source for the three EntryPoints
/// that share that struct; it is deployed once per EntryPoint, which it names in its constructor. The first byte
/// of paymasterData selects the mode. Mode 0 (sponsored): the paymaster pays, authorised by an off-chain
/// signature of the Patron service. Mode 1 (token): the paymaster pays the EntryPoint and charges the account in
/// an ERC-20, at an exchange rate and up to a maximum signed by the service; validation takes that maximum from
/// the account (prefund) and postOp refunds what the op did not cost, so the charge cannot fail after validation.
/// Mode 2 (token, guaranteed): the same fields, for an op whose approval is batched in its own callData (it runs
/// after validation, so it cannot be prefunded): validation prefunds when an allowance is already in place, else
/// checks the balance and the batched approval, and postOp collects the charge; a charge that then fails is paid
/// by the deposit, which the service only risks for a dApp whose sponsorship policy admits the op. Mode 3 (token,
/// permit): mode 1 for an account with no allowance yet, which signed an EIP-2612 permit of the token for this
/// paymaster instead: validation executes the permit (USDC's bytes form, deadline the maximum), then prefunds as
/// mode 1, so the charge is as safe as mode 1's.
/// @dev All integers big-endian, all signatures EIP-191 (`toEthSignedMessageHash`) by one of the paymaster's signers (`isSigner`), r||s||v.
/// paymasterAndData = paymaster(20) | uint128 paymasterVerificationGasLimit | uint128 paymasterPostOpGasLimit
///                    | paymasterData, the standard v0.7 prefix. paymasterData:
///   sponsored (paymasterAndData 154 bytes): [0] mode = 0 | [1:7] uint48 validUntil | [7:13] uint48 validAfter
///     | [13:21] uint64 maxVerificationGasLimit | [21:29] uint64 maxCallGasLimit | [29:37] uint64 maxPreVerificationGas
///     | [37:102] signature
///   token (210 bytes): [0] mode = 1 or 2 | [1:7] validUntil | [7:13] validAfter | [13:37] the three caps, as above
///     | [37:57] token | [57:73] uint128 exchangeRate | [73:77] uint32 priceMarkup | [77:93] uint128 maxTokenCost
///     | [93:158] signature
///   token permit (244 + n bytes): [0] mode = 3 | [1:93] as the token mode | [93:125] uint256 permitValue
///     | [125:127] uint16 n, the permit signature's length (at most MAX_PERMIT_SIGNATURE_LENGTH) | [127:127+n] the
///     permit signature (the account's EIP-712 signature of Permit(owner = sender, spender = this paymaster,
///     permitValue, the token's nonce, deadline = type(uint256).max), ERC-6492 wrapper removed) | signature
///   v0.9 parallel signing: the signature may instead follow paymasterData in the EntryPoint v0.9 suffix,
///     paymasterData-without-signature | signature(65) | uint16(65) | 0x22e325a297439656 (PAYMASTER_SIG_MAGIC),
///     164, 220 and 254 + n bytes. The v0.9 EntryPoint leaves `signature | uint16` out of the userOpHash, so the account
///     can sign before the service does. The fields are then exactly ERC4337Utils.paymasterData() and the
///     signature ERC4337Utils.paymasterSignature(). The form is accepted on every version (the older
///     EntryPoints hash it whole, which only means the account signs last). An inline signature never ends with
///     the magic: its last byte is v (27 or 28), the magic's is 0x56. Any other length reverts (AA33).
/// Gas caps: the service signs upper bounds of the account's three gas values, not the values themselves. Clients
/// such as viem's prepareUserOperation without a stub call ask for paymasterData first, with zero gas limits, and
/// have the bundler estimate the limits afterwards; a signature over exact limits could never match. An op whose
/// verificationGasLimit, callGasLimit or preVerificationGas exceeds its cap fails the signature check (AA34, not a
/// revert: a bundler estimating gas simulates with limits of its own and tolerates a signature failure, not a
/// revert). The paymaster's exposure stays bounded: the EntryPoint's prefund, the most it takes from the deposit,
/// is computed from the op's limits, which are at most the caps. Knowing the final limits, the service signs caps
/// equal to them, which is exact binding.
/// Digest:
///   opHash = keccak256(abi.encode(sender, nonce, initCodeHash, keccak256(callData), uint256 maxVerificationGasLimit,
///            uint256 maxCallGasLimit, bytes32 paymasterAndData[20:52], uint256 maxPreVerificationGas, gasFees))
///     (the caps in the places of accountGasLimits and preVerificationGas, which are not hashed themselves)
///   initCodeHash = sender.codehash (EXTCODEHASH) when initCode is empty, so the signature binds the code the
///     deployed sender runs: an EIP-7702 account re-delegated after signing, or any other change of its code, fails
///     it (AA34). A proxy's upgrade does not change the proxy's code hash and is not bound. Otherwise
///     keccak256(initCode), except for an EIP-7702 initCode (at least 2 bytes whose first 20,
///     zero-padded, are 0x7702 followed by zeros): keccak256(abi.encodePacked(delegate, initCode[20:])), or
///     keccak256(abi.encodePacked(delegate)) when initCode is at most 20 bytes, `delegate` being the sender's
///     current EIP-7702 delegate. That is the substitution EntryPoint v0.8+ makes for its userOpHash, so the
///     signature binds the code the account runs, not the marker; re-delegating the account voids it.
///   sponsoredHash = keccak256(abi.encode(opHash, chainid, address(this), entryPoint, uint8 0, uint48 validUntil,
///                   uint48 validAfter))
///   tokenHash = keccak256(abi.encode(opHash, chainid, address(this), entryPoint, uint8 mode (1, 2 or 3),
///               validUntil, validAfter, token, uint128 exchangeRate, uint32 priceMarkup, uint128 maxTokenCost))
///   permitHash (mode 3) = keccak256(abi.encode(tokenHash, uint256 permitValue, keccak256(permitSignature))): the
///     permit is bound too, so what validation executes is what the service simulated (see `getPermitHash`)
/// Every field the paymaster pays for is signed, exactly or as a cap (both paymaster gas limits exactly), so a
/// bundler cannot inflate gas beyond what was approved. Replay is prevented by the account nonce (in opHash), not
/// a paymaster nonce, so the service needs no chain read to sign. chainid, address(this) and the EntryPoint bind a
/// signature to one deployment; the mode byte keeps one mode's signature out of the other.
/// validationData = sigFailed | validUntil << 160 | validAfter << 208. v0.9 reads a window whose bounds both have
/// bit 47 set (ERC4337Utils.BLOCK_RANGE_FLAG) as block numbers; a window that sets it on one bound only is
/// ambiguous and is a signature failure, on every version (the older EntryPoints would read the flagged bound as
/// a timestamp some four million years away, i.e. no expiry).
/// Token charge, rounded up (in the paymaster's favour), never more than the signed maxTokenCost:
///   charge = ceil((actualGasCost + (POST_OP_OVERHEAD + maxPenaltyGas) * actualUserOpFeePerGas)
///            * exchangeRate * priceMarkup / 1e24)
///   exchangeRate: token base units per 1e18 wei; priceMarkup: parts per million (1e6 = no premium).
///   The service derives maxTokenCost from the gas caps (the prefund at the caps, plus the overhead and penalty
///   bound at maxFeePerGas), so it bounds the charge of any op within them.
/// Staking: the signer set and `feeReceiver` are storage reads, the token mode's prefund writes the token's
/// storage associated with the paymaster (its balance), and the token mode returns a context; ERC-7562 (STO-031,
/// EREP-050) lets bundlers accept all three only from a staked paymaster, hence `addStake`. The context is
/// 7 words (224 bytes), far under ERC-7562's 2,048-byte limit.
contract PatronPaymasterV07 is Paymaster, Ownable2Step {
    using ERC4337Utils for PackedUserOperation;
    using SafeERC20 for IERC20;
    using EnumerableSet for EnumerableSet.AddressSet;

    uint8 public constant MODE_SPONSORED = 0;
    uint8 public constant MODE_TOKEN = 1;
    uint8 public constant MODE_TOKEN_GUARANTEED = 2;
    /// Also what tells the service that a deployment has the permit mode: an older one has no such function.
    uint8 public constant MODE_TOKEN_PERMIT = 3;

    /// Gas the token mode's postOp and the EntryPoint's work after it use, which the `actualGasCost` handed to
    /// postOp does not include yet; it is charged at the op's gas price. Measured on the contract tests: postOp
    /// with an OpenZeppelin ERC-20 transfer to a fee receiver that holds no balance yet, plus the EntryPoint's
    /// accounting after it, is 37,025 gas on v0.8 and v0.9; the rest (~13k) is margin for heavier tokens. The
    /// service quotes with it (contracts/README.md).
    uint256 public constant POST_OP_OVERHEAD = 50_000;
    /// priceMarkup bounds: 1e6 is the plain exchange rate, 2e6 doubles it (a 100 % premium).
    uint32 public constant MIN_PRICE_MARKUP = 1e6;
    uint32 public constant MAX_PRICE_MARKUP = 2e6;

    /// paymasterAndData lengths: inline signature, and signature in the v0.9 suffix.
    uint256 public constant SPONSORED_LENGTH = 154;
    uint256 public constant TOKEN_LENGTH = 210;
    uint256 public constant SPONSORED_SUFFIXED_LENGTH = 164;
    uint256 public constant TOKEN_SUFFIXED_LENGTH = 220;
    /// The permit mode: TOKEN_PERMIT_LENGTH plus the permit signature's length (inline), 10 more suffixed.
    uint256 public constant TOKEN_PERMIT_LENGTH = 244;
    /// A bound on the permit signature (an account's ERC-1271 signature: 65 bytes for an ECDSA owner, a few hundred
    /// for a passkey's WebAuthn data), so the ERC-1271 call and the op's calldata stay small.
    uint256 public constant MAX_PERMIT_SIGNATURE_LENGTH = 2048;

    /// Offsets inside paymasterData (paymasterAndData[52:]).
    uint256 private constant PAYMASTER_DATA_OFFSET = 52;
    uint256 private constant VALID_UNTIL_OFFSET = 1;
    uint256 private constant VALID_AFTER_OFFSET = 7;
    uint256 private constant MAX_VERIFICATION_GAS_OFFSET = 13;
    uint256 private constant MAX_CALL_GAS_OFFSET = 21;
    uint256 private constant MAX_PRE_VERIFICATION_GAS_OFFSET = 29;
    uint256 private constant SPONSORED_FIELDS_LENGTH = 37;
    uint256 private constant TOKEN_OFFSET = 37;
    uint256 private constant RATE_OFFSET = 57;
    uint256 private constant MARKUP_OFFSET = 73;
    uint256 private constant MAX_COST_OFFSET = 77;
    uint256 private constant TOKEN_FIELDS_LENGTH = 93;
    uint256 private constant PERMIT_VALUE_OFFSET = 93;
    uint256 private constant PERMIT_LENGTH_OFFSET = 125;
    uint256 private constant PERMIT_SIGNATURE_OFFSET = 127;
    /// How much of a refused permit's revert data validation reports (the token's reason string fits).
    uint256 private constant PERMIT_REASON_LENGTH = 196;
    uint256 private constant SIGNATURE_LENGTH = 65;
    /// uint16 signature length + 8-byte magic after a v0.9 suffixed signature.
    uint256 private constant SUFFIX_TAIL_LENGTH = 10;

    /// ERC-20 approve(address,uint256)
    bytes4 private constant APPROVE_SELECTOR = 0x095ea7b3;
    /// The first 20 bytes of an EIP-7702 initCode: 0x7702 then zeros (EntryPoint v0.8's INITCODE_EIP7702_MARKER).
    bytes20 private constant EIP7702_INITCODE_MARKER = bytes20(bytes2(0x7702));

    /// EntryPoint v0.8 and v0.9 charge the 10 % unused-gas penalty only above this much unused gas.
    uint256 private constant PENALTY_GAS_THRESHOLD = 40_000;

    IEntryPoint private immutable _entryPoint;
    /// The EntryPoint's minor version, 7, 8 or 9, derived from its canonical address in the constructor. It
    /// selects the unused-gas penalty rule (see `maxPenaltyGas`): derived, not a constructor argument, so the
    /// rule can never disagree with the EntryPoint actually named; an EntryPoint elsewhere is refused.
    uint8 public immutable entryPointVersion;
    /// Receives the token mode's charges.
    address public feeReceiver;
    /// The keys whose signatures the paymaster accepts. More than one so that a key is rotated with an overlap:
    /// the owner adds the new key, the service's instances move to it, and the owner removes the old one, with no
    /// moment at which the signatures being issued are refused. Own storage: a bundler allows its read.
    EnumerableSet.AddressSet private _signers;

    event SignerAdded(address indexed signer);
    event SignerRemoved(address indexed signer);
    event FeeReceiverChanged(address indexed previousReceiver, address indexed newReceiver);
    /// A token-mode op was charged `charge` of `token`; `actualGasCost` is the wei figure postOp was given.
    event TokenCharged(address indexed account, address indexed token, uint256 charge, uint256 actualGasCost);

    error ZeroAddress();
    error SignerAlreadyAdded(address signer);
    error NotASigner(address signer);
    error UnsupportedEntryPoint(address entryPoint);
    error UnknownMode(uint8 mode);
    error InvalidPaymasterDataLength(uint256 length, uint256 expected);
    error RenounceOwnershipDisabled();
    error PriceMarkupOutOfRange(uint32 priceMarkup);
    error TokenBalanceTooLow(address token, uint256 balance, uint256 maxTokenCost);
    error TokenAllowanceTooLow(address token, uint256 allowance, uint256 maxTokenCost);
    /// The prefund's transferFrom failed although balance and allowance were enough (a token that refuses it).
    error TokenPrefundFailed(address token, uint256 maxTokenCost);
    /// Mode 3: the token refused the permit (its revert data, cut to 196 bytes, in `reason`) and the allowance in
    /// place does not cover the maximum either.
    error TokenPermitFailed(address token, uint256 allowance, uint256 maxTokenCost, bytes reason);
    error PermitSignatureTooLong(uint256 length, uint256 maximum);

    constructor(IEntryPoint entryPoint_, address owner_, address signer_) Ownable(owner_) {
        if (address(entryPoint_) == address(0) || signer_ == address(0)) revert ZeroAddress();
        _entryPoint = entryPoint_;
        entryPointVersion = _versionOf(entryPoint_);
        _signers.add(signer_);
        feeReceiver = owner_;
        emit SignerAdded(signer_);
        emit FeeReceiverChanged(address(0), owner_);
    }

    /// The three EntryPoints are deployed at the same address on every chain (CREATE2), which is how the
    /// version is known without trusting anything the EntryPoint says about itself.
    function _versionOf(IEntryPoint entryPoint_) private pure returns (uint8) {
        address at = address(entryPoint_);
        if (at == address(ERC4337Utils.ENTRYPOINT_V07)) return 7;
        if (at == address(ERC4337Utils.ENTRYPOINT_V08)) return 8;
        if (at == address(ERC4337Utils.ENTRYPOINT_V09)) return 9;
        revert UnsupportedEntryPoint(address(entryPoint_));
    }

    /// @inheritdoc Paymaster
    function entryPoint() public view override returns (IEntryPoint) {
        return _entryPoint;
    }

    // ---------------------------------------------------------------- ERC-4337 IPaymaster (via OZ Paymaster)

    /// @notice Called by the EntryPoint during validation (OZ's `validatePaymasterUserOp` checks the caller). A
    /// wrong signature, or an account gas value above its signed cap, returns SIG_VALIDATION_FAILED (AA34) and the
    /// window goes into validationData (AA32, or AA37 for an expired block range on v0.9), so bundlers can
    /// simulate without reverting. It reverts (AA33) on data it cannot parse and, in token mode, on a markup out
    /// of range or an account that cannot pay the signed maximum. The token modes write state (the prefund).
    function _validatePaymasterUserOp(PackedUserOperation calldata userOp, bytes32, /* userOpHash */ uint256)
        internal
        override
        returns (bytes memory context, uint256 validationData)
    {
        (bytes calldata fields, bytes calldata signature) = _splitPaymasterData(userOp);
        uint8 mode = uint8(fields[0]);
        if (mode == MODE_SPONSORED) return _validateSponsored(userOp, fields, signature);
        return _validateToken(userOp, fields, signature, mode);
    }

    /// @notice v0.7+ calls postOp only when validation returned a context: the token mode's, never the sponsored
    /// mode's, and never with postOpReverted. See `_postOpToken`.
    function _postOp(PostOpMode, bytes calldata context, uint256 actualGasCost, uint256 actualUserOpFeePerGas)
        internal
        override
    {
        _postOpToken(context, actualGasCost, actualUserOpFeePerGas);
    }

    // ---------------------------------------------------------------- paymasterData layout

    /// The signed fields (mode byte first) and the signature, in either placement, with exact lengths: anything
    /// else reverts, which the EntryPoint reports as AA33.
    function _splitPaymasterData(PackedUserOperation calldata userOp)
        internal
        pure
        returns (bytes calldata fields, bytes calldata signature)
    {
        bytes calldata data = userOp.paymasterAndData;
        uint256 length = data.length;
        if (length <= PAYMASTER_DATA_OFFSET) revert InvalidPaymasterDataLength(length, SPONSORED_LENGTH);
        uint8 mode = uint8(data[PAYMASTER_DATA_OFFSET]);
        if (mode > MODE_TOKEN_PERMIT) revert UnknownMode(mode);
        uint256 fieldsLength = mode == MODE_SPONSORED
            ? SPONSORED_FIELDS_LENGTH
            : mode == MODE_TOKEN_PERMIT ? _permitFieldsLength(data) : TOKEN_FIELDS_LENGTH;
        uint256 inlineLength = PAYMASTER_DATA_OFFSET + fieldsLength + SIGNATURE_LENGTH;
        if (length >= SUFFIX_TAIL_LENGTH && bytes8(data[length - 8:]) == ERC4337Utils.PAYMASTER_SIG_MAGIC) {
            uint256 expected = inlineLength + SUFFIX_TAIL_LENGTH;
            fields = userOp.paymasterData();
            signature = userOp.paymasterSignature();
            // Both slices are what ERC4337Utils (and so the v0.9 EntryPoint) makes of the suffix; checking their
            // lengths and the total pins the declared uint16 to 65 and leaves no byte unaccounted for.
            if (length != expected || fields.length != fieldsLength || signature.length != SIGNATURE_LENGTH) {
                revert InvalidPaymasterDataLength(length, expected);
            }
            return (fields, signature);
        }
        if (length != inlineLength) revert InvalidPaymasterDataLength(length, inlineLength);
        return (data[PAYMASTER_DATA_OFFSET:PAYMASTER_DATA_OFFSET + fieldsLength], data[PAYMASTER_DATA_OFFSET + fieldsLength:]);
    }

    /// Mode 3's signed fields' length: the token fields, the permit's value and length, and the permit signature of
    /// that length (read at the same offset in either signature placement).
    function _permitFieldsLength(bytes calldata data) private pure returns (uint256) {
        uint256 at = PAYMASTER_DATA_OFFSET + PERMIT_LENGTH_OFFSET;
        if (data.length < at + 2) revert InvalidPaymasterDataLength(data.length, TOKEN_PERMIT_LENGTH);
        uint256 n = uint16(bytes2(data[at:at + 2]));
        if (n > MAX_PERMIT_SIGNATURE_LENGTH) revert PermitSignatureTooLong(n, MAX_PERMIT_SIGNATURE_LENGTH);
        return PERMIT_SIGNATURE_OFFSET + n;
    }

    // ---------------------------------------------------------------- hashes (shared with the TS service)

    /// The signed window and gas caps, the first 36 bytes after the mode byte in both modes.
    struct Quote {
        uint48 validUntil;
        uint48 validAfter;
        uint64 maxVerificationGasLimit;
        uint64 maxCallGasLimit;
        uint64 maxPreVerificationGas;
    }

    /// @notice The hash the verifying signer signs (EIP-191) for a sponsored operation. paymasterAndData must
    /// hold at least the 52-byte prefix (its gas limits are signed); the rest of it is not read, nor are the op's
    /// accountGasLimits and preVerificationGas (the caps stand for them). With an empty initCode it binds the
    /// sender's code hash as the chain has it when called (see `_initCodeHash`).
    function getSponsoredHash(
        PackedUserOperation calldata userOp,
        uint48 validUntil,
        uint48 validAfter,
        uint64 maxVerificationGasLimit,
        uint64 maxCallGasLimit,
        uint64 maxPreVerificationGas
    ) external view returns (bytes32) {
        return _sponsoredHash(
            userOp, Quote(validUntil, validAfter, maxVerificationGasLimit, maxCallGasLimit, maxPreVerificationGas)
        );
    }

    /// @notice The hash the verifying signer signs (EIP-191) for a token-mode operation of `mode` (1 or 2); for
    /// mode 3 the first of two steps (see `getPermitHash`).
    function getTokenHash(
        PackedUserOperation calldata userOp,
        uint8 mode,
        uint48 validUntil,
        uint48 validAfter,
        uint64 maxVerificationGasLimit,
        uint64 maxCallGasLimit,
        uint64 maxPreVerificationGas,
        address token,
        uint128 exchangeRate,
        uint32 priceMarkup,
        uint128 maxTokenCost
    ) external view returns (bytes32) {
        return _tokenHash(
            userOp,
            Quote(validUntil, validAfter, maxVerificationGasLimit, maxCallGasLimit, maxPreVerificationGas),
            TokenData(token, exchangeRate, priceMarkup, maxTokenCost),
            mode
        );
    }

    /// @notice The hash the verifying signer signs (EIP-191) for a mode-3 operation: `tokenHash` is
    /// `getTokenHash(userOp, 3, …)`, and the permit is bound by its value and the hash of its signature.
    function getPermitHash(bytes32 tokenHash, uint256 permitValue, bytes calldata permitSignature)
        public
        pure
        returns (bytes32)
    {
        return keccak256(abi.encode(tokenHash, permitValue, keccak256(permitSignature)));
    }

    /// Every field of the op except paymasterData and signature (which carry the signature itself), with the
    /// signed caps in place of accountGasLimits and preVerificationGas; the two paymaster gas limits are in
    /// exactly, as one word.
    function _opHash(PackedUserOperation calldata userOp, Quote memory q) internal view returns (bytes32) {
        bytes calldata data = userOp.paymasterAndData;
        if (data.length < PAYMASTER_DATA_OFFSET) revert InvalidPaymasterDataLength(data.length, SPONSORED_LENGTH);
        return keccak256(
            abi.encode(
                userOp.sender,
                userOp.nonce,
                _initCodeHash(userOp),
                keccak256(userOp.callData),
                uint256(q.maxVerificationGasLimit),
                uint256(q.maxCallGasLimit),
                bytes32(data[20:PAYMASTER_DATA_OFFSET]),
                uint256(q.maxPreVerificationGas),
                userOp.gasFees
            )
        );
    }

    /// What the digest binds of the code the sender will run: for an empty initCode the sender's code hash
    /// (EXTCODEHASH, which ERC-7562 lets a paymaster read of the sender), so any change of its code after signing
    /// (an EIP-7702 account re-delegated, which EXTCODEHASH sees as keccak256(0xef0100 || delegate)) fails the
    /// signature (AA34); keccak256(initCode) otherwise, or for an EIP-7702 initCode the value EntryPoint v0.8's
    /// Eip7702Support substitutes, with the sender's current delegate. `bytes20(initCode)` zero-pads a shorter
    /// initCode, as the EntryPoint's calldataload does. A sender that is not delegated gives delegate 0 here (the
    /// EntryPoint itself refuses such an op before the paymaster runs). The code hash stands in the initCode
    /// hash's word: equal only for an op whose initCode is byte for byte the sender's code, which runs that same
    /// code (v0.7/v0.8 refuse initCode for a deployed sender; v0.9 ignores it).
    function _initCodeHash(PackedUserOperation calldata userOp) internal view returns (bytes32) {
        bytes calldata initCode = userOp.initCode;
        if (initCode.length == 0) return userOp.sender.codehash;
        if (initCode.length < 2 || bytes20(initCode) != EIP7702_INITCODE_MARKER) return keccak256(initCode);
        address delegate = EIP7702Utils.fetchDelegate(userOp.sender);
        if (initCode.length <= 20) return keccak256(abi.encodePacked(delegate));
        return keccak256(abi.encodePacked(delegate, initCode[20:]));
    }

    function _sponsoredHash(PackedUserOperation calldata userOp, Quote memory q) internal view returns (bytes32) {
        return keccak256(
            abi.encode(
                _opHash(userOp, q),
                block.chainid,
                address(this),
                address(_entryPoint),
                MODE_SPONSORED,
                q.validUntil,
                q.validAfter
            )
        );
    }

    /// The mode byte is hashed: a submitter cannot turn a mode-2 signature into mode 1 or back (AA34).
    function _tokenHash(PackedUserOperation calldata userOp, Quote memory q, TokenData memory d, uint8 mode)
        internal
        view
        returns (bytes32)
    {
        return keccak256(
            abi.encode(
                _opHash(userOp, q),
                block.chainid,
                address(this),
                address(_entryPoint),
                mode,
                q.validUntil,
                q.validAfter,
                d.token,
                d.exchangeRate,
                d.priceMarkup,
                d.maxTokenCost
            )
        );
    }

    function _decodeQuote(bytes calldata fields) internal pure returns (Quote memory q) {
        q.validUntil = uint48(bytes6(fields[VALID_UNTIL_OFFSET:VALID_AFTER_OFFSET]));
        q.validAfter = uint48(bytes6(fields[VALID_AFTER_OFFSET:MAX_VERIFICATION_GAS_OFFSET]));
        q.maxVerificationGasLimit = uint64(bytes8(fields[MAX_VERIFICATION_GAS_OFFSET:MAX_CALL_GAS_OFFSET]));
        q.maxCallGasLimit = uint64(bytes8(fields[MAX_CALL_GAS_OFFSET:MAX_PRE_VERIFICATION_GAS_OFFSET]));
        q.maxPreVerificationGas = uint64(bytes8(fields[MAX_PRE_VERIFICATION_GAS_OFFSET:SPONSORED_FIELDS_LENGTH]));
    }

    /// Whether the signature may stand for this op: a consistent window, gas within the signed caps, the verifying
    /// signer's signature. Every failure is a signature failure (AA34), never a revert (see the contract's notes).
    function _quoteHolds(PackedUserOperation calldata userOp, Quote memory q, bytes32 hash, bytes calldata signature)
        internal
        view
        returns (bool)
    {
        return _windowIsConsistent(q.validUntil, q.validAfter)
            && userOp.verificationGasLimit() <= q.maxVerificationGasLimit && userOp.callGasLimit() <= q.maxCallGasLimit
            && userOp.preVerificationGas <= q.maxPreVerificationGas
            && _isSignedBy(MessageHashUtils.toEthSignedMessageHash(hash), signature);
    }

    // ---------------------------------------------------------------- mode 0: sponsored

    function _validateSponsored(PackedUserOperation calldata userOp, bytes calldata fields, bytes calldata signature)
        internal
        view
        returns (bytes memory, uint256)
    {
        Quote memory q = _decodeQuote(fields);
        bool sigFailed = !_quoteHolds(userOp, q, _sponsoredHash(userOp, q), signature);
        // Empty context: the EntryPoint then skips postOp entirely, saving its gas.
        return ("", _packValidationData(sigFailed, q.validUntil, q.validAfter));
    }

    // ---------------------------------------------------------------- mode 1: token

    struct TokenData {
        address token;
        uint128 exchangeRate;
        uint32 priceMarkup;
        uint128 maxTokenCost;
    }

    /// The token fields, the markup within its bounds (else a revert, AA33).
    function _decodeToken(bytes calldata fields) internal pure returns (TokenData memory d) {
        d.token = address(bytes20(fields[TOKEN_OFFSET:RATE_OFFSET]));
        d.exchangeRate = uint128(bytes16(fields[RATE_OFFSET:MARKUP_OFFSET]));
        d.priceMarkup = uint32(bytes4(fields[MARKUP_OFFSET:MAX_COST_OFFSET]));
        d.maxTokenCost = uint128(bytes16(fields[MAX_COST_OFFSET:TOKEN_FIELDS_LENGTH]));
        if (d.priceMarkup < MIN_PRICE_MARKUP || d.priceMarkup > MAX_PRICE_MARKUP) {
            revert PriceMarkupOutOfRange(d.priceMarkup);
        }
    }

    /// The signature (with the window, the gas caps and the mode byte, and in mode 3 the permit) is checked first: a
    /// tampered op fails as AA34 whatever its token says. Then the account pays:
    /// - mode 1: the signed maximum moves from the account to the paymaster now (`transferFrom`, which needs an
    ///   allowance already in place and the balance); an account that cannot pay reverts here (AA33), so the
    ///   bundler's simulation drops it and the deposit never pays for it;
    /// - mode 2: the same prefund when the allowance is already in place; otherwise the balance and an
    ///   `approve(paymaster, >= maxTokenCost)` inside its own callData (batched with the user's call, it runs after
    ///   validation and before postOp), and postOp collects the charge;
    /// - mode 3: the permit is executed (`_tryPermit`), then the prefund of mode 1.
    function _validateToken(
        PackedUserOperation calldata userOp,
        bytes calldata fields,
        bytes calldata signature,
        uint8 mode
    ) internal returns (bytes memory, uint256) {
        if (mode == MODE_TOKEN_PERMIT) return _validateTokenPermit(userOp, fields, signature);
        Quote memory q = _decodeQuote(fields);
        TokenData memory d = _decodeToken(fields);
        if (!_quoteHolds(userOp, q, _tokenHash(userOp, q, d, mode), signature)) {
            return ("", _packValidationData(true, q.validUntil, q.validAfter));
        }
        bool prefunded = mode == MODE_TOKEN
            || IERC20(d.token).allowance(userOp.sender, address(this)) >= d.maxTokenCost;
        if (prefunded) _prefund(userOp.sender, d.token, d.maxTokenCost, "");
        else _checkCanPay(userOp, d.token, d.maxTokenCost);
        return (_tokenContext(userOp, d, prefunded), _packValidationData(false, q.validUntil, q.validAfter));
    }

    /// Mode 3 apart from modes 1 and 2, whose validation keeps its gas: the hash binds the permit too, the permit is
    /// executed, then mode 1's prefund (whose failure names a refused permit).
    function _validateTokenPermit(PackedUserOperation calldata userOp, bytes calldata fields, bytes calldata signature)
        internal
        returns (bytes memory, uint256)
    {
        (Quote memory q, TokenData memory d, bytes32 hash) = _decodePermitFields(userOp, fields);
        if (!_quoteHolds(userOp, q, hash, signature)) {
            return ("", _packValidationData(true, q.validUntil, q.validAfter));
        }
        bytes memory permitError =
            _tryPermit(userOp.sender, d.token, _permitValue(fields), _permitSignature(fields));
        _prefund(userOp.sender, d.token, d.maxTokenCost, permitError);
        return (_tokenContext(userOp, d, true), _packValidationData(false, q.validUntil, q.validAfter));
    }

    /// Mode 3's fields and the hash the signer signed for them: the token hash (mode byte 3) bound to the permit.
    function _decodePermitFields(PackedUserOperation calldata userOp, bytes calldata fields)
        internal
        view
        returns (Quote memory q, TokenData memory d, bytes32 hash)
    {
        q = _decodeQuote(fields);
        d = _decodeToken(fields);
        hash = getPermitHash(
            _tokenHash(userOp, q, d, MODE_TOKEN_PERMIT), _permitValue(fields), _permitSignature(fields)
        );
    }

    function _permitValue(bytes calldata fields) private pure returns (uint256) {
        return uint256(bytes32(fields[PERMIT_VALUE_OFFSET:PERMIT_LENGTH_OFFSET]));
    }

    /// The permit signature: everything after its length (`_fieldsLength` made the fields exactly that long).
    function _permitSignature(bytes calldata fields) private pure returns (bytes calldata) {
        return fields[PERMIT_SIGNATURE_OFFSET:];
    }

    /// Executes the account's permit of `value` for this paymaster at the maximum deadline (the token then reads no
    /// TIMESTAMP, which ERC-7562 bans in validation). A failure is tolerated, not a revert: the permit may already
    /// have been submitted by someone else (anyone can, once it is public), which leaves the allowance it set in
    /// place for the prefund. Returns the token's revert data on failure (at most PERMIT_REASON_LENGTH bytes, for
    /// the prefund's error), empty on success.
    function _tryPermit(address account, address token, uint256 value, bytes calldata permitSignature)
        internal
        returns (bytes memory reason)
    {
        bytes memory permitCall =
            abi.encodeCall(IBytesPermit.permit, (account, address(this), value, type(uint256).max, permitSignature));
        bool ok;
        uint256 kept = PERMIT_REASON_LENGTH;
        assembly ("memory-safe") {
            ok := call(gas(), token, 0, add(permitCall, 0x20), mload(permitCall), 0, 0)
            if iszero(ok) {
                // The token's revert data, copied no further than the bound: it is only reported.
                if lt(returndatasize(), kept) { kept := returndatasize() }
                reason := mload(0x40)
                mstore(reason, kept)
                returndatacopy(add(reason, 0x20), 0, kept)
                mstore(0x40, add(add(reason, 0x20), and(add(kept, 31), not(31))))
            }
        }
        if (ok) return "";
        // A failure that returned nothing must still read as a failure.
        if (reason.length == 0) reason = hex"00";
    }

    /// Takes the signed maximum from the account. On failure, says why as precisely as it can (AA33); in mode 3 a
    /// refused permit (`permitError`) is named when the allowance falls short.
    function _prefund(address account, address token, uint256 maxTokenCost, bytes memory permitError) internal {
        if (IERC20(token).trySafeTransferFrom(account, address(this), maxTokenCost)) return;
        uint256 balance = IERC20(token).balanceOf(account);
        if (balance < maxTokenCost) revert TokenBalanceTooLow(token, balance, maxTokenCost);
        uint256 allowance = IERC20(token).allowance(account, address(this));
        if (allowance < maxTokenCost) {
            if (permitError.length > 0) revert TokenPermitFailed(token, allowance, maxTokenCost, permitError);
            revert TokenAllowanceTooLow(token, allowance, maxTokenCost);
        }
        revert TokenPrefundFailed(token, maxTokenCost);
    }

    /// What postOp needs: who pays, in what, at which price, up to what, the penalty bound of this op, and whether
    /// the maximum was taken in validation (7 words, 224 bytes: ERC-7562 allows a staked paymaster 2,048).
    function _tokenContext(PackedUserOperation calldata userOp, TokenData memory d, bool prefunded)
        internal
        view
        returns (bytes memory)
    {
        uint256 penaltyGas = maxPenaltyGas(userOp.callGasLimit(), userOp.paymasterPostOpGasLimit());
        return abi.encode(userOp.sender, d.token, d.exchangeRate, d.priceMarkup, d.maxTokenCost, penaltyGas, prefunded);
    }

    /// Mode 2 without an allowance in place: the balance, and the approval batched in callData.
    function _checkCanPay(PackedUserOperation calldata userOp, address token, uint256 maxTokenCost) internal view {
        uint256 balance = IERC20(token).balanceOf(userOp.sender);
        if (balance < maxTokenCost) revert TokenBalanceTooLow(token, balance, maxTokenCost);
        uint256 allowance = IERC20(token).allowance(userOp.sender, address(this));
        if (allowance < maxTokenCost && !_approvesPaymaster(userOp.callData, maxTokenCost)) {
            revert TokenAllowanceTooLow(token, allowance, maxTokenCost);
        }
    }

    /// Whether callData carries `approve(address(this), amount >= minAmount)`. Account call formats that
    /// ABI-encode their inner calls as `bytes` (SimpleAccount `execute`/`executeBatch`, Safe's module calls, an
    /// ERC-7579 batch) start them on a 32-byte boundary after the 4-byte selector: offsets 4 + 32k. An ERC-7579
    /// single execution packs target(20) | value(32) | callData, which puts the inner call 20 bytes past that
    /// grid: offsets 4 + 32k + 20. Which token the approval goes to is not checked (the account's encoding of
    /// targets varies): an approval of the wrong token makes postOp's transfer fail, which on v0.7+ reverts the
    /// op's execution while the paymaster pays its gas; the service simulates every token op before signing to
    /// refuse exactly that.
    function _approvesPaymaster(bytes calldata callData, uint256 minAmount) internal view returns (bool) {
        bytes32 spender = bytes32(uint256(uint160(address(this))));
        uint256 end = callData.length;
        for (uint256 word = 4; word + 68 <= end; word += 32) {
            if (_isApproval(callData, word, spender, minAmount)) return true;
            if (word + 88 <= end && _isApproval(callData, word + 20, spender, minAmount)) return true;
        }
        return false;
    }

    function _isApproval(bytes calldata callData, uint256 at, bytes32 spender, uint256 minAmount)
        private
        pure
        returns (bool)
    {
        return bytes4(callData[at:at + 4]) == APPROVE_SELECTOR && bytes32(callData[at + 4:at + 36]) == spender
            && uint256(bytes32(callData[at + 36:at + 68])) >= minAmount;
    }

    /// @notice The most unused-gas penalty the EntryPoint can add after postOp, which the `actualGasCost` given
    /// to postOp does not include:
    /// - v0.7 charges 10 % of the unused callGasLimit + paymasterPostOpGasLimit, all after postOp:
    ///   (callGasLimit + postOpGasLimit) / 10;
    /// - v0.8 and v0.9 charge 10 % of unused execution gas and of unused postOp gas separately, each only when
    ///   more than 40,000 gas of it is unused; the execution part is added before postOp (it is already in
    ///   postOp's actualGasCost), so only the postOp part remains: postOpGasLimit > 40,000 ? postOpGasLimit / 10
    ///   : 0.
    /// Both are the penalty with nothing used, an upper bound; the charge stays within the signed maximum.
    function maxPenaltyGas(uint256 callGasLimit, uint256 postOpGasLimit) public view returns (uint256) {
        if (entryPointVersion == 7) return (callGasLimit + postOpGasLimit) / 10;
        return postOpGasLimit > PENALTY_GAS_THRESHOLD ? postOpGasLimit / 10 : 0;
    }

    /// The charge: actualGasCost plus POST_OP_OVERHEAD and the penalty bound at the op's gas price (what the
    /// EntryPoint passes as actualUserOpFeePerGas), converted and marked up, rounded up, capped by the signed
    /// maximum. `TokenCharged` reports the amount finally kept.
    /// - Prefunded (mode 1, and mode 2 with an allowance in place): the paymaster holds the maximum; it refunds
    ///   `maxTokenCost - charge` to the account and pays `charge` to the fee receiver. This never reverts: a refund
    ///   the token refuses leaves the whole maximum with the paymaster (the op is then charged its maximum), and a
    ///   payment to the fee receiver the token refuses leaves the charge with the paymaster, where the owner can
    ///   take it with `withdrawTokens`. (A postOp that runs out of its own gas limit reverts as a whole: the
    ///   EntryPoint then reverts the op's execution, and the prefund, taken in validation, stays with the paymaster.)
    /// - Not prefunded (mode 2 with the approval in callData): the charge moves from the account to the fee receiver.
    ///   A failed transfer reverts postOp; the v0.7+ EntryPoint then reverts the op's execution too and charges the
    ///   paymaster's deposit for the gas, with the maximum postOp penalty. There is no second postOp call on these
    ///   versions, hence no record of unpaid charges (unlike PatronPaymaster v0.6): that loss is what the dApp
    ///   guarantees, and the service signs mode 2 only within the dApp's sponsorship policy.
    function _postOpToken(bytes calldata context, uint256 actualGasCost, uint256 actualUserOpFeePerGas) internal {
        (
            address account,
            address token,
            uint128 exchangeRate,
            uint32 priceMarkup,
            uint128 maxTokenCost,
            uint256 penaltyGas,
            bool prefunded
        ) = abi.decode(context, (address, address, uint128, uint32, uint128, uint256, bool));
        uint256 charge = Math.mulDiv(
            actualGasCost + (POST_OP_OVERHEAD + penaltyGas) * actualUserOpFeePerGas,
            uint256(exchangeRate) * priceMarkup,
            1e24,
            Math.Rounding.Ceil
        );
        if (charge > maxTokenCost) charge = maxTokenCost;
        if (!prefunded) {
            IERC20(token).safeTransferFrom(account, feeReceiver, charge);
        } else {
            if (charge < maxTokenCost && !IERC20(token).trySafeTransfer(account, maxTokenCost - charge)) {
                charge = maxTokenCost;
            }
            IERC20(token).trySafeTransfer(feeReceiver, charge);
        }
        emit TokenCharged(account, token, charge, actualGasCost);
    }

    /// Tokens the paymaster holds outside a bundle: charges and refunds a token refused to move in postOp.
    function withdrawTokens(IERC20 token, address to, uint256 amount) external onlyOwner {
        if (to == address(0)) revert ZeroAddress();
        token.safeTransfer(to, amount);
    }

    // ---------------------------------------------------------------- helpers

    /// tryRecover (not recover) so that a malformed signature (bad v, high s, r = 0) is a plain failure:
    /// reverting would turn a bad signature into AA33 and hide it from the bundler's simulation.
    function _isSignedBy(bytes32 digest, bytes calldata signature) internal view returns (bool) {
        (address recovered, ECDSA.RecoverError err,) =
            ECDSA.tryRecover(digest, uint8(signature[64]), bytes32(signature[0:32]), bytes32(signature[32:64]));
        return err == ECDSA.RecoverError.NoError && _signers.contains(recovered);
    }

    /// False when exactly one bound carries the v0.9 block-number flag (OZ PaymasterSigner's rule).
    function _windowIsConsistent(uint48 validUntil, uint48 validAfter) internal pure returns (bool) {
        return (validUntil ^ validAfter) & ERC4337Utils.BLOCK_RANGE_FLAG == 0;
    }

    /// ERC-4337 validationData layout: sigFailed (160 bits) | validUntil (48) | validAfter (48). Not
    /// ERC4337Utils.packValidationData: that one rewrites the flag bits, where the signed window must reach the
    /// EntryPoint as signed.
    function _packValidationData(bool sigFailed, uint48 validUntil, uint48 validAfter)
        internal
        pure
        returns (uint256)
    {
        return (sigFailed ? ERC4337Utils.SIG_VALIDATION_FAILED : ERC4337Utils.SIG_VALIDATION_SUCCESS)
            | (uint256(validUntil) << 160) | (uint256(validAfter) << 208);
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

    /// Without an owner nobody could withdraw the deposit or stake, so renouncing is refused.
    function renounceOwnership() public view override onlyOwner {
        revert RenounceOwnershipDisabled();
    }

    // ---------------------------------------------------------------- EntryPoint deposit and stake

    /// Anyone may top up the deposit the EntryPoint charges for the operations this paymaster pays.
    function deposit() external payable {
        _deposit(msg.value);
    }

    function getDeposit() external view returns (uint256) {
        return _entryPoint.balanceOf(address(this));
    }

    function withdrawTo(address payable withdrawAddress, uint256 amount) external onlyOwner {
        _withdraw(withdrawAddress, amount);
    }

    /// Stake is not needed by handleOps itself but by bundlers' reputation rules (ERC-7562).
    function addStake(uint32 unstakeDelaySec) external payable onlyOwner {
        _addStake(msg.value, unstakeDelaySec);
    }

    function unlockStake() external onlyOwner {
        _unlockStake();
    }

    function withdrawStake(address payable withdrawAddress) external onlyOwner {
        _withdrawStake(withdrawAddress);
    }
}
