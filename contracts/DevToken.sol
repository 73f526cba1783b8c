// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";

/// @title An ERC-20 for the embedded dev chain and tests only.
/// @notice Anyone may mint: it is a faucet token on a throwaway chain, never to be deployed where it could
/// look like value. The decimals are set at deployment so one contract stands in for 6-decimal stablecoins
/// ("USDC") and 18-decimal tokens alike.
contract DevToken is ERC20 {
    uint8 private immutable _decimals;

    constructor(string memory name_, string memory symbol_, uint8 decimals_) ERC20(name_, symbol_) {
        _decimals = decimals_;
    }

    function decimals() public view override returns (uint8) {
        return _decimals;
    }

    function mint(address to, uint256 amount) external {
        _mint(to, amount);
    }
}
