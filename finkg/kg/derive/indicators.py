"""The series of paper 001's candidate sequences, computed for one ticker at once.

`series(bars)` returns one float column per series, indexed like the bars: the six basic
price series of paper 001 §3.2 (raw, as the price file gives them) and the technical
indicator groups of its §3.1 / appendix A, grouped in `GROUPS`. Every indicator is causal:
its value on session d uses bars up to and including d only (rolling windows, recursive
EMAs, lags), so deriving from a longer file never changes an earlier value. A value that
cannot be computed yet (too little history) or at all (a division by zero: a flat
high-low range, a constant volume window) is NaN, and windows touching it are not made.

Prices for indicators are split- and dividend-adjusted: the adjusted close, and open, high
and low scaled by adj_close / close, so a split is not a crash in MACD or a return. Volume
is raw. Parameters are the textbook defaults:

| group | series | how |
|---|---|---|
| basic | open, high, low, close, adj_close, volume | the price file (raw) |
| macd | macd, macd_signal, macd_histogram | `ta.trend.MACD` (12, 26, 9) on adj. close |
| macd_crossover | macd_crossover | +1 MACD crosses above its signal, -1 below, 0 none |
| bollinger_bands | bollinger_upper, _middle, _lower | `ta.volatility.BollingerBands` (20, 2) |
| exceeding_upper | exceeding_upper | 1 when adj. close is above the upper band, else 0 |
| exceeding_lower | exceeding_lower | 1 when adj. close is below the lower band, else 0 |
| kdj | kdj_k, kdj_d, kdj_j | K, D of `ta.momentum.StochasticOscillator` (9, 3); J = 3K - 2D |
| kdj_crossover | kdj_crossover | +1 K crosses above D, -1 below, 0 none |
| rsi | rsi | `ta.momentum.RSIIndicator` (14) |
| overbought_and_oversold | overbought_and_oversold | +1 RSI > 70, -1 RSI < 30, else 0 |
| returns | returns, returns_5d | adj. close change over 1 and 5 sessions (fractions) |
| vwap | vwap | `ta.volume.VolumeWeightedAveragePrice` (14 sessions) |
| alphaNNN | alpha002 ... alpha101 | WorldQuant 101 formulaic alphas: see `alphas()` |
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from ta.momentum import RSIIndicator, StochasticOscillator
from ta.trend import MACD
from ta.volatility import BollingerBands
from ta.volume import VolumeWeightedAveragePrice

BASIC = ("open", "high", "low", "close", "adj_close", "volume")
RANK_WINDOW = 20  # sessions of the time-series rank that stands in for WQ101's rank()
ALPHAS = (
    "alpha002",
    "alpha003",
    "alpha006",
    "alpha009",
    "alpha012",
    "alpha023",
    "alpha033",
    "alpha041",
    "alpha053",
    "alpha054",
    "alpha101",
)
GROUPS: dict[str, tuple[str, ...]] = {
    **{name: (name,) for name in BASIC},
    "macd": ("macd", "macd_signal", "macd_histogram"),
    "macd_crossover": ("macd_crossover",),
    "bollinger_bands": ("bollinger_upper", "bollinger_middle", "bollinger_lower"),
    "exceeding_upper": ("exceeding_upper",),
    "exceeding_lower": ("exceeding_lower",),
    "kdj": ("kdj_k", "kdj_d", "kdj_j"),
    "kdj_crossover": ("kdj_crossover",),
    "rsi": ("rsi",),
    "overbought_and_oversold": ("overbought_and_oversold",),
    "returns": ("returns", "returns_5d"),
    "vwap": ("vwap",),
    **{name: (name,) for name in ALPHAS},
}
SERIES: tuple[str, ...] = tuple(s for names in GROUPS.values() for s in names)
# Series whose values are whole numbers (counts and -1/0/+1 flags): written without decimals.
INTEGRAL = frozenset(
    {
        "volume",
        "macd_crossover",
        "exceeding_upper",
        "exceeding_lower",
        "kdj_crossover",
        "overbought_and_oversold",
    }
)


def series(bars: pd.DataFrame) -> pd.DataFrame:
    """Every series of `SERIES` for one ticker's bars (columns of `BASIC`, sorted by date).

    >>> bars = pd.DataFrame({c: [10.0 + i for i in range(40)] for c in BASIC})
    >>> s = series(bars)
    >>> list(s.columns) == list(SERIES), round(float(s["returns"].iloc[1]), 4)
    (True, 0.1)
    """
    o, h, lo, c, adj, v = (bars[name].astype("float64") for name in BASIC)
    factor = adj / c
    ao, ah, al = o * factor, h * factor, lo * factor
    out: dict[str, pd.Series] = {name: bars[name].astype("float64") for name in BASIC}

    macd = MACD(adj, window_slow=26, window_fast=12, window_sign=9)
    out["macd"], out["macd_signal"] = macd.macd(), macd.macd_signal()
    out["macd_histogram"] = macd.macd_diff()
    out["macd_crossover"] = crossover(out["macd"], out["macd_signal"])

    bands = BollingerBands(adj, window=20, window_dev=2)
    out["bollinger_upper"] = bands.bollinger_hband()
    out["bollinger_middle"] = bands.bollinger_mavg()
    out["bollinger_lower"] = bands.bollinger_lband()
    out["exceeding_upper"] = _flag(adj > out["bollinger_upper"], out["bollinger_upper"])
    out["exceeding_lower"] = _flag(adj < out["bollinger_lower"], out["bollinger_lower"])

    stoch = StochasticOscillator(ah, al, adj, window=9, smooth_window=3)
    k, d = stoch.stoch(), stoch.stoch_signal()
    out["kdj_k"], out["kdj_d"], out["kdj_j"] = k, d, 3 * k - 2 * d
    out["kdj_crossover"] = crossover(k, d)

    rsi = RSIIndicator(adj, window=14).rsi()
    out["rsi"] = rsi
    out["overbought_and_oversold"] = pd.Series(
        np.where(rsi > 70, 1.0, np.where(rsi < 30, -1.0, 0.0)), index=rsi.index
    ).where(rsi.notna())

    out["returns"] = adj.pct_change(1)
    out["returns_5d"] = adj.pct_change(5)
    out["vwap"] = VolumeWeightedAveragePrice(
        ah, al, adj, v, window=14
    ).volume_weighted_average_price()
    out.update(alphas(ao, ah, al, adj, v))

    frame = pd.DataFrame({name: out[name] for name in SERIES}, index=bars.index)
    return frame.replace([np.inf, -np.inf], np.nan)


def crossover(fast: pd.Series, slow: pd.Series) -> pd.Series:
    """+1 on the session `fast` moves above `slow`, -1 when it moves below, else 0.

    >>> crossover(pd.Series([1.0, 3.0, 3.0, 1.0]), pd.Series([2.0, 2.0, 2.0, 2.0])).tolist()
    [nan, 1.0, 0.0, -1.0]
    """
    diff = fast - slow
    above = diff > 0
    before = above.shift(1, fill_value=False)
    flags = np.where(above & ~before, 1.0, np.where(~above & before, -1.0, 0.0))
    known = diff.notna() & diff.shift(1).notna()
    return pd.Series(flags, index=fast.index).where(known)


def _flag(condition: pd.Series, reference: pd.Series) -> pd.Series:
    return condition.astype("float64").where(reference.notna())


def ts_rank(x: pd.Series, window: int = RANK_WINDOW) -> pd.Series:
    """Percentile rank of each value among the last `window` values (1.0 = the highest)."""
    return x.rolling(window).rank(pct=True)


def _corr(a: pd.Series, b: pd.Series, window: int) -> pd.Series:
    return a.rolling(window).corr(b).clip(-1.0, 1.0)


def alphas(
    o: pd.Series, h: pd.Series, lo: pd.Series, c: pd.Series, v: pd.Series
) -> dict[str, pd.Series]:
    """WorldQuant formulaic alphas from daily OHLCV (Kakushadze 2016, "101 Formulaic Alphas",
    Wilmott 84, arXiv:1601.00991), on adjusted prices `o, h, lo, c` and raw volume `v`.

    The paper's `rank(x)` is a cross-sectional rank over a universe of stocks on one day;
    a single ticker has no cross-section, so `rank` here is `ts_rank`: the percentile rank
    of today's value among this ticker's last RANK_WINDOW (20) sessions, which uses no
    future data. `vwap` (alpha #41) is the day's typical price (high + low + close) / 3,
    as no intraday data is at hand. Formulas, with delta(x, d) = x - x d sessions ago:

    - #2:   -1 * correlation(rank(delta(log(volume), 2)), rank((close - open) / open), 6)
    - #3:   -1 * correlation(rank(open), rank(volume), 10)
    - #6:   -1 * correlation(open, volume, 10)
    - #9:   delta(close, 1) if 0 < ts_min(delta(close, 1), 5) or ts_max(delta(close, 1), 5) < 0,
            else -1 * delta(close, 1)
    - #12:  sign(delta(volume, 1)) * (-1 * delta(close, 1))
    - #23:  -1 * delta(high, 2) if sum(high, 20) / 20 < high, else 0
    - #33:  rank(-1 * (1 - open / close))
    - #41:  (high * low) ^ 0.5 - vwap
    - #53:  -1 * delta(((close - low) - (high - close)) / (close - low), 9)
    - #54:  (-1 * (low - close) * open ^ 5) / ((low - high) * close ^ 5)
    - #101: (close - open) / ((high - low) + 0.001)
    """
    dc = c.diff(1)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_v = np.log(v.where(v > 0))
        a9 = np.where((dc.rolling(5).min() > 0) | (dc.rolling(5).max() < 0), dc, -1.0 * dc)
        inner53 = ((c - lo) - (h - c)) / (c - lo)
        return {
            "alpha002": -1.0 * _corr(ts_rank(log_v.diff(2)), ts_rank((c - o) / o), 6),
            "alpha003": -1.0 * _corr(ts_rank(o), ts_rank(v), 10),
            "alpha006": -1.0 * _corr(o, v, 10),
            "alpha009": pd.Series(a9, index=c.index).where(dc.rolling(5).count() == 5),
            "alpha012": np.sign(v.diff(1)) * (-1.0 * dc),
            "alpha023": pd.Series(
                np.where(h.rolling(20).mean() < h, -1.0 * h.diff(2), 0.0), index=h.index
            ).where(h.rolling(20).mean().notna() & h.diff(2).notna()),
            "alpha033": ts_rank(-1.0 * (1.0 - o / c)),
            "alpha041": np.sqrt(h * lo) - (h + lo + c) / 3.0,
            "alpha053": -1.0 * inner53.replace([np.inf, -np.inf], np.nan).diff(9),
            "alpha054": (-1.0 * (lo - c) * o**5) / ((lo - h) * c**5),
            "alpha101": (c - o) / ((h - lo) + 0.001),
        }
