// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

/// @title A Chainlink-style price feed for the embedded dev chain and tests only.
/// @notice Implements AggregatorV3Interface (https://docs.chain.link/data-feeds/api-reference) with answers set
/// by anyone: like DevToken's open mint, it exists on throwaway chains only, where an open setter is what
/// tests need (fresh, stale, negative and carried-over answers) and there is nothing to protect.
contract DevPriceFeed {
    struct Round {
        int256 answer;
        uint256 startedAt;
        uint256 updatedAt;
        uint80 answeredInRound;
    }

    uint8 public immutable decimals;
    string public description;
    uint256 public constant version = 1;

    uint80 private _latestRound;
    mapping(uint80 roundId => Round) private _rounds;

    /// Chainlink's AggregatorInterface events, so indexers and tests can follow updates.
    event AnswerUpdated(int256 indexed current, uint256 indexed roundId, uint256 updatedAt);
    event NewRound(uint256 indexed roundId, address indexed startedBy, uint256 startedAt);

    /// Asked for a round that was never written (Chainlink reverts with "No data present").
    error NoDataPresent();

    /// @param initialAnswer The first round's answer, updated at deployment; 0 leaves the feed without rounds.
    constructor(uint8 decimals_, string memory description_, int256 initialAnswer) {
        decimals = decimals_;
        description = description_;
        if (initialAnswer != 0) setAnswer(initialAnswer, block.timestamp);
    }

    /// Starts a new round answered in itself: the normal, fresh case.
    function setAnswer(int256 answer, uint256 updatedAt) public {
        setRound(answer, updatedAt, updatedAt, _latestRound + 1);
    }

    /// Starts a new round with every field chosen, e.g. `answeredInRound` below the round id (a stale answer).
    function setRound(int256 answer, uint256 startedAt, uint256 updatedAt, uint80 answeredInRound) public {
        uint80 roundId = ++_latestRound;
        _rounds[roundId] = Round(answer, startedAt, updatedAt, answeredInRound);
        emit NewRound(roundId, msg.sender, startedAt);
        emit AnswerUpdated(answer, roundId, updatedAt);
    }

    function getRoundData(uint80 roundId)
        public
        view
        returns (uint80, int256 answer, uint256 startedAt, uint256 updatedAt, uint80 answeredInRound)
    {
        if (roundId == 0 || roundId > _latestRound) revert NoDataPresent();
        Round storage r = _rounds[roundId];
        return (roundId, r.answer, r.startedAt, r.updatedAt, r.answeredInRound);
    }

    function latestRoundData()
        external
        view
        returns (uint80 roundId, int256 answer, uint256 startedAt, uint256 updatedAt, uint80 answeredInRound)
    {
        return getRoundData(_latestRound);
    }
}
