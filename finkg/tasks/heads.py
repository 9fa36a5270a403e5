"""Decision heads: class decisions from a reader's option scores, fitted point-in-time.

A small reader is biased as well as weak: the greedy argmax of its option log-probabilities
says "rise" (or "-1") for almost everything. A head turns the scores, and optionally numbers
the job has anyway (the market card's), into a decision, fitted only on earlier decisions
whose outcomes had matured strictly before the decision it makes (`fit_as_of`):

- `prior`: class-prior correction. Each option's mean log-probability over the fitting
  items is subtracted before the argmax, which removes the reader's constant preference and
  keeps what varies from item to item.
- `multinomial`: an L2-regularised multinomial logistic regression over the centred option
  scores and the features; `card` is the same over the features alone, which isolates what
  the reader adds.
- a rule (`SignRule`): a no-skill rule the job computes anyway, as a head that fits nothing:
  the class from the sign of one feature beyond a threshold (the impact job's `momentum`
  and `tone`). A job passes its rules by name (`rules=`), so a head chosen on validation
  (`tasks.head_choice`) can be a rule, and the decision then names the rule.

A head's state (`HeadState`) is plain data with a digest, written as RDF by
`tasks.head_records`, so a decision can say which head it used and the head can be read
back as of any instant. Deterministic: the same items give the same state.

>>> items = [Matured(T0, {"rise": -0.2, "fall": -1.8}, (), "rise"),
...          Matured(T0, {"rise": -0.3, "fall": -1.2}, (), "fall")]
>>> head = fit_as_of(items, as_of=T1, kind="prior", classes=("rise", "fall"))
>>> head.n, head.decide({"rise": -0.4, "fall": -1.2}, ())
(2, 'fall')
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field

import numpy as np
from scipy.optimize import minimize

from finkg.errors import InputError

KINDS = ("none", "prior", "multinomial", "card")
T0 = dt.datetime(2020, 1, 2, 21, tzinfo=dt.UTC)  # for the doctest
T1 = dt.datetime(2020, 1, 3, 21, tzinfo=dt.UTC)


@dataclass(frozen=True)
class Matured:
    """An earlier decision's inputs beside what happened, and when that became known."""

    matured_at: dt.datetime
    scores: Mapping[str, float]  # option -> log-probability
    features: tuple[float, ...]  # the job's own numbers (NaN where unknown)
    label: str


@dataclass(frozen=True)
class SignRule:
    """A rule as a head: `above` where feature `feature` exceeds `threshold`, `below` where
    it is under minus `threshold`, `between` otherwise and where it is unknown (NaN).

    >>> momentum = SignRule(feature=0, threshold=1.0, above="up", between="neutral", below="down")
    >>> [momentum.decide(x) for x in (1.5, 0.2, -3.0, float("nan"))]
    ['up', 'neutral', 'down', 'neutral']
    """

    feature: int
    threshold: float
    above: str
    between: str
    below: str

    @classmethod
    def of(cls, data: object) -> SignRule:
        """A rule from its stored form (a head state's `rule` object)."""
        if not isinstance(data, dict):
            raise ValueError(f"a rule is stored as a JSON object, not {data!r}")
        return cls(
            int(data["feature"]),
            float(data["threshold"]),
            str(data["above"]),
            str(data["between"]),
            str(data["below"]),
        )

    def decide(self, value: float) -> str:
        if value > self.threshold:
            return self.above
        return self.below if value < -self.threshold else self.between


@dataclass(frozen=True)
class HeadState:
    kind: str
    classes: tuple[str, ...]
    as_of: dt.datetime  # fitted on items matured strictly before this instant
    n: int
    first: dt.datetime | None  # the fitting window: the first and last maturity used
    last: dt.datetime | None
    parameters: dict[str, object] = field(default_factory=dict)

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.parameters_json().encode()).hexdigest()

    def parameters_json(self) -> str:
        return json.dumps(
            {"kind": self.kind, "classes": list(self.classes), **self.parameters},
            sort_keys=True,
            separators=(",", ":"),
        )

    def probabilities(self, scores: Mapping[str, float], features: Sequence[float]) -> np.ndarray:
        """The head's probability of each class, in `classes` order."""
        logits = self._logits(scores, features)
        logits = logits - logits.max()
        p = np.exp(logits)
        return p / p.sum()

    def decide(self, scores: Mapping[str, float], features: Sequence[float]) -> str:
        logits = self._logits(scores, features)
        return self.classes[int(np.argmax(logits))]  # ties go to the first class

    def _logits(self, scores: Mapping[str, float], features: Sequence[float]) -> np.ndarray:
        if "rule" in self.parameters:  # a rule: all its probability on the class it decides
            rule = SignRule.of(self.parameters["rule"])
            return np.where(
                np.array(self.classes) == rule.decide(features[rule.feature]), 0, -np.inf
            )
        s = np.array([scores[c] for c in self.classes], dtype=float)
        if self.kind == "none" or self.n == 0:
            return s
        if self.kind == "prior":
            return s - np.array(self.parameters["means"], dtype=float)
        x = _design(self.kind, s, np.asarray(features, dtype=float), self.parameters)
        w = np.array(self.parameters["weights"], dtype=float)
        return w @ x


def _design(
    kind: str, scores: np.ndarray, features: np.ndarray, p: Mapping[str, object]
) -> np.ndarray:
    """The regression's inputs for one item: 1, the centred scores (not for `card`), and the
    standardised features (NaN as 0, the mean)."""
    parts = [np.ones(1)]
    if kind == "multinomial":
        parts.append(scores - np.array(p["means"], dtype=float))
    if len(features):
        z = (features - np.array(p["feature_means"])) / np.array(p["feature_scales"])
        parts.append(np.nan_to_num(z, nan=0.0))
    return np.concatenate(parts)


def _window(items: Sequence[Matured]) -> tuple[dt.datetime | None, dt.datetime | None]:
    times = [i.matured_at for i in items]
    return (min(times), max(times)) if times else (None, None)


def fit_as_of(
    items: Sequence[Matured],
    *,
    as_of: dt.datetime,
    kind: str,
    classes: Sequence[str],
    l2: float = 1.0,
    window: dt.timedelta | None = None,
    rules: Mapping[str, SignRule] | None = None,
) -> HeadState:
    """A head fitted on the `items` that matured strictly before `as_of` (and within
    `window` of it when given). With no such item every head is the raw argmax. A `kind`
    named in `rules` is that rule: it fits nothing, and decides the same with or without
    items."""
    rules = rules or {}
    if kind not in KINDS and kind not in rules:
        raise InputError(
            "unknown decision head", field="head", value=kind, hint=f"use {(*KINDS, *rules)}"
        )
    if as_of.tzinfo is None:
        raise InputError("an instant needs a zone", field="as_of", value=as_of.isoformat())
    start = as_of - window if window is not None else None
    used = [
        i
        for i in items
        if i.matured_at < as_of and (start is None or i.matured_at >= start) and i.label in classes
    ]
    first, last = _window(used)
    classes = tuple(classes)
    if kind in rules:
        return HeadState(
            kind, classes, as_of, len(used), first, last, {"rule": asdict(rules[kind])}
        )
    if kind == "none" or not used:
        return HeadState(kind, classes, as_of, len(used), first, last, {})
    scores = np.array([[i.scores[c] for c in classes] for i in used], dtype=float)
    means = scores.mean(axis=0)
    params: dict[str, object] = {"means": [round(float(m), 10) for m in means]}
    if kind == "prior":
        return HeadState(kind, classes, as_of, len(used), first, last, params)
    features = np.array([i.features for i in used], dtype=float).reshape(len(used), -1)
    with np.errstate(all="ignore"):
        f_means = np.nan_to_num(np.nanmean(features, axis=0)) if features.size else np.zeros(0)
        f_scales = np.nanstd(features, axis=0) if features.size else np.zeros(0)
    f_scales = np.where(np.isfinite(f_scales) & (f_scales > 0), f_scales, 1.0)
    params |= {
        "feature_means": [round(float(m), 10) for m in f_means],
        "feature_scales": [round(float(s), 10) for s in f_scales],
        "l2": l2,
    }
    x = np.array([_design(kind, s, f, params) for s, f in zip(scores, features, strict=True)])
    y = np.array([classes.index(i.label) for i in used])
    params["weights"] = _multinomial(x, y, len(classes), l2).round(10).tolist()
    return HeadState(kind, classes, as_of, len(used), first, last, params)


def _multinomial(x: np.ndarray, y: np.ndarray, k: int, l2: float) -> np.ndarray:
    """Weights (k, d) of a multinomial logistic regression, the intercepts unpenalised."""
    n, d = x.shape
    onehot = np.eye(k)[y]
    penalty = np.ones((k, d))
    penalty[:, 0] = 0.0

    def loss(flat: np.ndarray) -> tuple[float, np.ndarray]:
        w = flat.reshape(k, d)
        logits = x @ w.T
        logits -= logits.max(axis=1, keepdims=True)
        logp = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
        value = -(onehot * logp).sum() / n + 0.5 * l2 * ((penalty * w) ** 2).sum() / n
        grad = (np.exp(logp) - onehot).T @ x / n + l2 * penalty * w / n
        return float(value), grad.ravel()

    result = minimize(loss, np.zeros(k * d), jac=True, method="L-BFGS-B")
    return result.x.reshape(k, d)


class Prequential:
    """A head kept current in time order: refitted, on everything matured before the
    decision, whenever something new has matured since the last fit."""

    def __init__(
        self,
        kind: str,
        classes: Sequence[str],
        *,
        history: Sequence[Matured] = (),
        window: dt.timedelta | None = None,
        rules: Mapping[str, SignRule] | None = None,
    ) -> None:
        self.kind = kind
        self.classes = tuple(classes)
        self.window = window
        self.rules = rules
        self.items: list[Matured] = list(history)
        self.state: HeadState | None = None
        self.fits = 0

    def add(self, item: Matured) -> None:
        self.items.append(item)

    def at(self, decision: dt.datetime) -> HeadState:
        known = sum(i.matured_at < decision and i.label in self.classes for i in self.items)
        if self.state is None or known != self.state.n or self.window is not None:
            self.state = fit_as_of(
                self.items,
                as_of=decision,
                kind=self.kind,
                classes=self.classes,
                window=self.window,
                rules=self.rules,
            )
            self.fits += 1
        return self.state
