// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {DevToken} from "./DevToken.sol";
import {MessageHashUtils} from "@openzeppelin/contracts/utils/cryptography/MessageHashUtils.sol";
import {SignatureChecker} from "@openzeppelin/contracts/utils/cryptography/SignatureChecker.sol";

/// @title The dev chain's USDC: DevToken with the EIP-2612 permit of Circle's FiatToken v2.2.
/// @notice Dev chain and tests only (anyone may mint, as DevToken). It reproduces what Patron's permit mode relies
/// on in USDC (circlefin/stablecoin-evm, contracts/v2/EIP2612.sol, FiatTokenV2_2.sol, util/SignatureChecker.sol,
/// util/ECRecover.sol), written here from that behaviour, not copied:
/// - `permit(owner, spender, value, deadline, bytes signature)` beside the usual (v, r, s) form, which packs
///   r || s || v and calls the same code;
/// - the deadline check `deadline == type(uint256).max || deadline >= block.timestamp`: with the maximum deadline
///   the short-circuit never reaches TIMESTAMP, an opcode ERC-7562 bans in validation (OP-011), so a paymaster may
///   execute such a permit while validating an op. OpenZeppelin's ERC20Permit compares the timestamp always;
/// - the signature check: an owner without code is checked by ECDSA (65 bytes, s in the lower half, v 27 or 28,
///   else a revert), an owner with code (a smart account, an EIP-7702 account) by ERC-1271 `isValidSignature` only,
///   through a staticcall whose answer must be the magic value;
/// - the EIP-712 domain {name: name(), version: "2", chainId, verifyingContract: this}, computed on each call as
///   FiatTokenV2_2 does, `nonces(owner)` incremented by every permit, `DOMAIN_SEPARATOR()` and `version()`.
/// Revert strings are Circle's.
contract DevFiatToken is DevToken {
    /// keccak256("Permit(address owner,address spender,uint256 value,uint256 nonce,uint256 deadline)")
    bytes32 public constant PERMIT_TYPEHASH = 0x6e71edae12b1b97f4d1f60370fef10105fa2faae0126114a169c64845d6126c9;
    /// keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)")
    bytes32 private constant DOMAIN_TYPEHASH = 0x8b73c3c69bb8fe3d512ecc4cf759cc79239f7b179b0ffacaa9a75d522b39400f;
    /// secp256k1n / 2: a larger s is the malleable twin of a valid signature (EIP-2).
    uint256 private constant HALF_ORDER = 0x7FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF5D576E7357A4501DDFE92F46681B20A0;

    mapping(address owner => uint256 nonce) private _permitNonces;

    constructor(string memory name_, string memory symbol_, uint8 decimals_) DevToken(name_, symbol_, decimals_) {}

    /// The EIP-712 domain's version, as USDC's.
    function version() external pure returns (string memory) {
        return "2";
    }

    function nonces(address owner) external view returns (uint256) {
        return _permitNonces[owner];
    }

    // solhint-disable-next-line func-name-mixedcase
    function DOMAIN_SEPARATOR() external view returns (bytes32) {
        return _domainSeparator();
    }

    function permit(address owner, address spender, uint256 value, uint256 deadline, uint8 v, bytes32 r, bytes32 s)
        external
    {
        _permit(owner, spender, value, deadline, abi.encodePacked(r, s, v));
    }

    function permit(address owner, address spender, uint256 value, uint256 deadline, bytes memory signature) external {
        _permit(owner, spender, value, deadline, signature);
    }

    function _permit(address owner, address spender, uint256 value, uint256 deadline, bytes memory signature)
        internal
    {
        require(deadline == type(uint256).max || deadline >= block.timestamp, "FiatTokenV2: permit is expired");
        bytes32 digest = MessageHashUtils.toTypedDataHash(
            _domainSeparator(),
            keccak256(abi.encode(PERMIT_TYPEHASH, owner, spender, value, _permitNonces[owner]++, deadline))
        );
        require(_isValidSignatureNow(owner, digest, signature), "EIP2612: invalid signature");
        _approve(owner, spender, value);
    }

    /// Circle's SignatureChecker: ECDSA for an address without code, ERC-1271 alone for one with code (so an
    /// EIP-7702 account, which has code, is asked through its delegate's isValidSignature).
    function _isValidSignatureNow(address signer, bytes32 digest, bytes memory signature) internal view returns (bool) {
        if (signer.code.length == 0) return _recover(digest, signature) == signer;
        return SignatureChecker.isValidERC1271SignatureNow(signer, digest, signature);
    }

    /// Circle's ECRecover.recover: a malformed or malleable signature reverts instead of recovering.
    function _recover(bytes32 digest, bytes memory signature) internal pure returns (address) {
        require(signature.length == 65, "ECRecover: invalid signature length");
        bytes32 r;
        bytes32 s;
        uint8 v;
        assembly ("memory-safe") {
            r := mload(add(signature, 0x20))
            s := mload(add(signature, 0x40))
            v := byte(0, mload(add(signature, 0x60)))
        }
        require(uint256(s) <= HALF_ORDER, "ECRecover: invalid signature 's' value");
        require(v == 27 || v == 28, "ECRecover: invalid signature 'v' value");
        address signer = ecrecover(digest, v, r, s);
        require(signer != address(0), "ECRecover: invalid signature");
        return signer;
    }

    function _domainSeparator() internal view returns (bytes32) {
        return keccak256(abi.encode(DOMAIN_TYPEHASH, keccak256(bytes(name())), keccak256("2"), block.chainid, address(this)));
    }
}
