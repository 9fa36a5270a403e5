"""What `finkg serve` lets through: its policy, checked on each request before the proxy
(`proxy.py`) passes it to the Oxigraph server.

`Policy.admit(request)` raises `Refused` (an HTTP status and a reason for the body):
- 401: the server has a bearer token (`--token-file`, `FINKG_TOKEN`) and the request does
  not carry it (the SPARQL page and its scripts need none: they hold no data);
- 403: a write to a read-only endpoint, saying how to start it read-write;
- 403: a request that names a personal `users/*` graph (in its query or update, the
  protocol's dataset parameters or a Graph Store request), or a Graph Store read of the
  whole dataset, unless the server serves users (`--include-users`);
- 403: an update or Graph Store write that changes the `audit` or `ontology` graph
  (finkg's commits, lifecycle and vocabulary: through a server the audit graph takes
  `INSERT DATA` alone, which is how finkg's remote backend appends a commit to every
  write), one that states something about a vocabulary term outside the ontology graph, or
  an update whose graphs cannot be told (`update_targets`);
- 400: a query or update with SERVICE or LOAD (the server would call another host), unless
  `--allow-service` (`sparql_guard.py`), or an update that cannot be read.

`Policy.dataset(request, graphs)` says how to scope a query that names no dataset of its
own when the users' graphs are kept back: the protocol's `named-graph-uri` (and
`default-graph-uri` for a union) set to every graph but the users'.
"""

from __future__ import annotations

import hmac
from dataclasses import dataclass, field

from finkg.errors import QueryError
from finkg.kg.graphs import Graphs
from finkg.kg.sparql_guard import has_dataset_clause, iris, outbound_reason
from finkg.kg.update_targets import Targets, update_targets
from finkg.ontology.terms import is_vocabulary_term

STATIC = frozenset(("/", "/yasgui.min.js", "/yasgui.min.css", "/logo.svg"))  # the page
DATASET_PARAMS = (
    "default-graph-uri",
    "named-graph-uri",
    "using-graph-uri",
    "using-named-graph-uri",
)
_WRITES = ("POST", "PUT", "DELETE", "PATCH")
_USERS = (
    "the users/* graphs hold personal data (transactions, profiles) and this server does not "
    "serve them; start it with `finkg serve --include-users` to serve them"
)
_OWN_GRAPHS = (
    "the audit and ontology graphs are written by finkg alone (commits, lifecycle "
    "transitions, its vocabulary); rewrite them as maintenance on the store itself: "
    "`finkg query --update --maintenance --store DIR`"
)


class Refused(Exception):
    """A request the server does not pass on: its HTTP status and the reason to send."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status, self.reason = status, reason


@dataclass(frozen=True)
class Request:
    """What the policy reads of one request: its method, path (unquoted), URL parameters,
    form-body parameters, query and update texts (from wherever they came), and its
    Authorization header."""

    command: str
    path: str
    params: dict[str, list[str]]
    form: dict[str, list[str]]
    texts: dict[str, list[str]]
    authorization: str = ""

    @property
    def writes(self) -> bool:
        return (
            self.path == "/update"
            or "update" in self.texts
            or (self.path == "/store" and self.command in _WRITES)
        )

    @property
    def static(self) -> bool:
        return self.command in ("GET", "HEAD") and self.path in STATIC


@dataclass(frozen=True)
class Policy:
    """What the endpoint allows; `timeout_s` 0 means no time limit; `token`, when set, is
    asked of every request; `graphs` names finkg's graphs (the users' and finkg's own)."""

    read_write: bool = False
    allow_service: bool = False
    timeout_s: float = 60.0
    token: str | None = field(default=None, repr=False)
    include_users: bool = False
    graphs: Graphs = field(default_factory=Graphs)

    def is_user_graph(self, iri: str) -> bool:
        return iri.startswith(self.graphs.prefix + "users/")

    def is_finkgs_own(self, iri: str) -> bool:
        return iri in (self.graphs.audit.value, self.graphs.ontology.value)

    def admit(self, request: Request) -> None:
        """Raise `Refused` for what this endpoint does not do (the module docstring)."""
        if request.static:
            return
        self._authorize(request.authorization)
        if request.writes and not self.read_write:
            raise Refused(
                403,
                "this endpoint is read-only (finkg serve without --read-write): updates and "
                "Graph Store writes are refused; start it with `finkg serve --read-write` "
                "to accept them",
            )
        try:
            updates = [update_targets(t) for t in request.texts.get("update", [])]
        except QueryError as e:
            raise Refused(400, str(e)) from None
        self._check_users(request, updates)
        self._check_owned(request, updates)
        if self.allow_service:
            return
        for text in (t for values in request.texts.values() for t in values):
            reason = outbound_reason(text)
            if reason is not None:
                raise Refused(
                    400,
                    f"finkg serve refuses {reason}: it would make this server send requests "
                    "to other hosts; start it with `finkg serve --allow-service` to allow "
                    "federated queries and LOAD",
                )

    def _authorize(self, authorization: str) -> None:
        if self.token is None:
            return
        scheme, _, given = authorization.partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(
            given.strip().encode(), self.token.encode()
        ):
            raise Refused(
                401,
                "this endpoint needs its bearer token: send `Authorization: Bearer <token>` "
                "(finkg: set FINKG_TOKEN; the SPARQL page: paste it in its token field)",
            )

    def _check_users(self, request: Request, updates: list[Targets]) -> None:
        """403 for a request that names a users' graph, or reads the whole dataset through
        the Graph Store, unless users are served."""
        if self.include_users:
            return
        named = [v for k in DATASET_PARAMS for v in request.params.get(k, [])]
        named += [v for k in DATASET_PARAMS for v in request.form.get(k, [])]
        for text in request.texts.get("query", []):
            named += iris(text)
        for text, targets in zip(request.texts.get("update", []), updates, strict=True):
            # a ground update (what finkg's remote backend sends) reads nothing and writes
            # the graphs it names; any other may read what it names
            named += targets.graphs if targets.ground else iris(text)
        if request.path == "/store":
            graph = request.params.get("graph", [])
            if not graph and "default" not in request.params:
                raise Refused(
                    403,
                    "a Graph Store request for the whole dataset would include the users/* "
                    "graphs: name a graph (?graph=IRI); " + _USERS,
                )
            named += graph
        if any(self.is_user_graph(g) for g in named):
            raise Refused(403, _USERS)

    def _check_owned(self, request: Request, updates: list[Targets]) -> None:
        """403 for a write that changes finkg's own graphs or redefines its vocabulary."""
        if request.path == "/store" and request.command in _WRITES:
            if any(self.is_finkgs_own(g) for g in request.params.get("graph", [])):
                raise Refused(403, _OWN_GRAPHS)
        ontology = self.graphs.ontology.value
        for targets in updates:
            appended = targets.appended - {ontology}
            if any(self.is_finkgs_own(g) for g in targets.graphs - appended):
                raise Refused(403, _OWN_GRAPHS)
            if any(is_vocabulary_term(s) and g != ontology for s, _p, g in targets.statements):
                raise Refused(
                    403,
                    "the update states something about a term of finkg's vocabulary (or of "
                    "PROV, SKOS, RDF, RDFS, OWL, SHACL, XSD) outside the ontology graph, where "
                    "those terms are defined alone",
                )
            if targets.any_graph is not None:
                raise Refused(
                    403,
                    f"the update may write any graph ({targets.any_graph}), finkg's own and "
                    "the users' among them: name the graphs it writes",
                )

    def needs_scope(self, request: Request) -> bool:
        """Whether a query must be kept to the graphs other than the users': users are
        not served, and it is a query naming no dataset of its own."""
        queries = request.texts.get("query", [])
        if self.include_users or not queries or "update" in request.texts:
            return False
        given = request.form if request.form else request.params
        return not any(k in given for k in DATASET_PARAMS[:2]) and not any(
            has_dataset_clause(q) for q in queries
        )

    def scoped(self, params: dict[str, list[str]], graphs: list[str]) -> dict[str, list[str]]:
        """`params` (a query's protocol parameters) reading every graph of `graphs` but the
        users': as named graphs, and as the default graph where it asked for the union."""
        allowed = [g for g in graphs if not self.is_user_graph(g)]
        scoped = dict(params)
        union = scoped.pop("union-default-graph", None) is not None
        scoped["named-graph-uri"] = allowed or [self.graphs.prefix + "empty"]
        if union:
            scoped["default-graph-uri"] = scoped["named-graph-uri"]
        return scoped
