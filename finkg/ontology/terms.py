"""The closed vocabulary: every IRI finkg writes, as pyoxigraph `NamedNode` constants.

`FKG` holds finkg's own terms, each declared in `finkg.ttl` (a test fails on a constant
that is not, and on a declared term with no constant). The other classes hold the terms
finkg uses from PROV-O, Dublin Core terms, SKOS, RDF, RDFS, OWL and XSD; a test checks
them against rdflib's closed namespaces. A misspelt term is an `AttributeError` at import,
never a silently new IRI.

>>> FKG.availableAt.value
'https://w3id.org/finkg/ns#availableAt'
>>> FKG.availabelAt
Traceback (most recent call last):
...
AttributeError: type object 'FKG' has no attribute 'availabelAt'
"""

from __future__ import annotations

from collections.abc import Iterator

from pyoxigraph import NamedNode

FKG_NS = "https://w3id.org/finkg/ns#"
PROV_NS = "http://www.w3.org/ns/prov#"
DCTERMS_NS = "http://purl.org/dc/terms/"
SKOS_NS = "http://www.w3.org/2004/02/skos/core#"
RDF_NS = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
RDFS_NS = "http://www.w3.org/2000/01/rdf-schema#"
OWL_NS = "http://www.w3.org/2002/07/owl#"
XSD_NS = "http://www.w3.org/2001/XMLSchema#"

SH_NS = "http://www.w3.org/ns/shacl#"
FKGI_NS = "https://w3id.org/finkg/items#"  # the core line items (line_items.ttl)
# the namespaces whose terms are defined in the ontology graph alone: finkg's own and those
# it builds on (Dublin Core terms is left out: it names no classes finkg's shapes read)
VOCABULARY_NAMESPACES = (FKG_NS, FKGI_NS, PROV_NS, SKOS_NS, RDF_NS, RDFS_NS, OWL_NS, SH_NS, XSD_NS)


def is_vocabulary_term(iri: str) -> bool:
    """Whether `iri` is a term of finkg's namespace or of a vocabulary finkg builds on.

    >>> is_vocabulary_term("https://w3id.org/finkg/ns#NewsArticle"), is_vocabulary_term("https://e.org/x")
    (True, False)
    """
    return iri.startswith(VOCABULARY_NAMESPACES)


PREFIXES = {
    "fkg": FKG_NS,
    "prov": PROV_NS,
    "dcterms": DCTERMS_NS,
    "skos": SKOS_NS,
    "rdf": RDF_NS,
    "rdfs": RDFS_NS,
    "owl": OWL_NS,
    "xsd": XSD_NS,
}


def _fkg(name: str) -> NamedNode:
    return NamedNode(FKG_NS + name)


def terms_of(namespace: type) -> Iterator[tuple[str, NamedNode]]:
    """Every (name, term) constant of one of the vocabulary classes below."""
    for name, value in vars(namespace).items():
        if isinstance(value, NamedNode):
            yield name, value


class FKG:
    """finkg's own terms (`https://w3id.org/finkg/ns#`)."""

    # classes
    Answer = _fkg("Answer")
    Asset = _fkg("Asset")
    BankEntry = _fkg("BankEntry")
    Citation = _fkg("Citation")
    Commit = _fkg("Commit")
    Company = _fkg("Company")
    Customer = _fkg("Customer")
    Document = _fkg("Document")
    DocumentChunk = _fkg("DocumentChunk")
    EventAnchor = _fkg("EventAnchor")
    Evidence = _fkg("Evidence")
    FilingPassage = _fkg("FilingPassage")
    HorizonSignal = _fkg("HorizonSignal")
    ImpactPrediction = _fkg("ImpactPrediction")
    IndicatorWindow = _fkg("IndicatorWindow")
    MarketEntity = _fkg("MarketEntity")
    MemoryCell = _fkg("MemoryCell")
    MemoryUpdate = _fkg("MemoryUpdate")
    DecisionHead = _fkg("DecisionHead")
    ReaderAdapter = _fkg("ReaderAdapter")
    MovementPrediction = _fkg("MovementPrediction")
    NewsArticle = _fkg("NewsArticle")
    Outcome = _fkg("Outcome")
    PriceBar = _fkg("PriceBar")
    PriceSummary = _fkg("PriceSummary")
    Recommendation = _fkg("Recommendation")
    RecommendedAsset = _fkg("RecommendedAsset")
    Run = _fkg("Run")
    SourceDocument = _fkg("SourceDocument")
    SourceMemory = _fkg("SourceMemory")
    StatementFact = _fkg("StatementFact")
    SubQuestion = _fkg("SubQuestion")
    Transaction = _fkg("Transaction")
    Transition = _fkg("Transition")
    # object properties
    about = _fkg("about")
    anchor = _fkg("anchor")
    asset = _fkg("asset")
    cell = _fkg("cell")
    citation = _fkg("citation")
    cites = _fkg("cites")
    customer = _fkg("customer")
    document = _fkg("document")
    eventType = _fkg("eventType")
    forCustomer = _fkg("forCustomer")
    fromOutcome = _fkg("fromOutcome")
    fromPrediction = _fkg("fromPrediction")
    fromState = _fkg("fromState")
    issuedBy = _fkg("issuedBy")
    lifecycleState = _fkg("lifecycleState")
    memory = _fkg("memory")
    decidedBy = _fkg("decidedBy")
    mentions = _fkg("mentions")
    newsItem = _fkg("newsItem")
    pick = _fkg("pick")
    recommends = _fkg("recommends")
    refersTo = _fkg("refersTo")
    signal = _fkg("signal")
    sourceFamily = _fkg("sourceFamily")
    subQuestion = _fkg("subQuestion")
    toState = _fkg("toState")
    # datatype properties
    accessionNumber = _fkg("accessionNumber")
    adjClose = _fkg("adjClose")
    answerJson = _fkg("answerJson")
    answerText = _fkg("answerText")
    asOf = _fkg("asOf")
    headKind = _fkg("headKind")
    sampleSize = _fkg("sampleSize")
    windowStart = _fkg("windowStart")
    windowEnd = _fkg("windowEnd")
    headState = _fkg("headState")
    stateHash = _fkg("stateHash")
    adapterSha256 = _fkg("adapterSha256")
    assetCategory = _fkg("assetCategory")
    assetSubCategory = _fkg("assetSubCategory")
    availableAt = _fkg("availableAt")
    charEnd = _fkg("charEnd")
    charStart = _fkg("charStart")
    chunkOverlap = _fkg("chunkOverlap")
    chunkSize = _fkg("chunkSize")
    cik = _fkg("cik")
    close = _fkg("close")
    complianceScore = _fkg("complianceScore")
    contentHash = _fkg("contentHash")
    recordHash = _fkg("recordHash")
    criticalGroundedness = _fkg("criticalGroundedness")
    customerType = _fkg("customerType")
    decisionTime = _fkg("decisionTime")
    downProbability = _fkg("downProbability")
    form = _fkg("form")
    groundedness = _fkg("groundedness")
    high = _fkg("high")
    horizon = _fkg("horizon")
    indicator = _fkg("indicator")
    industry = _fkg("industry")
    invalidCitations = _fkg("invalidCitations")
    investmentCapacity = _fkg("investmentCapacity")
    isin = _fkg("isin")
    item = _fkg("item")
    jsonValid = _fkg("jsonValid")
    low = _fkg("low")
    maturedAt = _fkg("maturedAt")
    mediaType = _fkg("mediaType")
    modelId = _fkg("modelId")
    movement = _fkg("movement")
    negativeCount = _fkg("negativeCount")
    negativeDelta = _fkg("negativeDelta")
    neutralProbability = _fkg("neutralProbability")
    normalizedText = _fkg("normalizedText")
    numericConsistency = _fkg("numericConsistency")
    open = _fkg("open")
    parameters = _fkg("parameters")
    passageIndex = _fkg("passageIndex")
    period = _fkg("period")
    periodAveragePrice = _fkg("periodAveragePrice")
    periodEndDate = _fkg("periodEndDate")
    periodEndPrice = _fkg("periodEndPrice")
    periodHighPrice = _fkg("periodHighPrice")
    periodLowPrice = _fkg("periodLowPrice")
    periodStartDate = _fkg("periodStartDate")
    positiveCount = _fkg("positiveCount")
    positiveDelta = _fkg("positiveDelta")
    predictedLabel = _fkg("predictedLabel")
    predictionDay = _fkg("predictionDay")
    promptHash = _fkg("promptHash")
    publisherSite = _fkg("publisherSite")
    quadCount = _fkg("quadCount")
    question = _fkg("question")
    position = _fkg("position")
    rank = _fkg("rank")
    reason = _fkg("reason")
    residualLabel = _fkg("residualLabel")
    residualZ = _fkg("residualZ")
    riseProbability = _fkg("riseProbability")
    riskLevel = _fkg("riskLevel")
    route = _fkg("route")
    score = _fkg("score")
    sector = _fkg("sector")
    sequence = _fkg("sequence")
    sessionDate = _fkg("sessionDate")
    signalValue = _fkg("signalValue")
    site = _fkg("site")
    targetDate = _fkg("targetDate")
    task = _fkg("task")
    templateHash = _fkg("templateHash")
    text = _fkg("text")
    ticker = _fkg("ticker")
    timeQuality = _fkg("timeQuality")
    timeRule = _fkg("timeRule")
    tokenEnd = _fkg("tokenEnd")
    tokensIn = _fkg("tokensIn")
    tokensOut = _fkg("tokensOut")
    requests = _fkg("requests")
    retries = _fkg("retries")
    readerSeconds = _fkg("readerSeconds")
    attemptFailure = _fkg("attemptFailure")
    failedRequest = _fkg("failedRequest")
    tokenStart = _fkg("tokenStart")
    topic = _fkg("topic")
    totalValue = _fkg("totalValue")
    transactionType = _fkg("transactionType")
    units = _fkg("units")
    upProbability = _fkg("upProbability")
    validationStatus = _fkg("validationStatus")
    variant = _fkg("variant")
    volume = _fkg("volume")
    # statement facts
    lineItem = _fkg("lineItem")
    concept = _fkg("concept")
    statement = _fkg("statement")
    fiscalYear = _fkg("fiscalYear")
    periodEnd = _fkg("periodEnd")
    duration = _fkg("duration")
    value = _fkg("value")
    unit = _fkg("unit")
    printedValue = _fkg("printedValue")
    page = _fkg("page")
    pageStarts = _fkg("pageStarts")
    reportedIn = _fkg("reportedIn")
    # concept schemes
    EventTypes = _fkg("EventTypes")
    FinancialStatements = _fkg("FinancialStatements")
    LineItems = _fkg("LineItems")
    LifecycleStates = _fkg("LifecycleStates")
    SourceFamilies = _fkg("SourceFamilies")
    # concepts
    Analysis = _fkg("Analysis")
    Analyzed = _fkg("Analyzed")
    CapitalTransactions = _fkg("CapitalTransactions")
    DocumentFamily = _fkg("DocumentFamily")
    EarningsGuidance = _fkg("EarningsGuidance")
    Error = _fkg("Error")
    Indexed = _fkg("Indexed")
    LegalRegulatory = _fkg("LegalRegulatory")
    ManagementOperations = _fkg("ManagementOperations")
    Market = _fkg("Market")
    News = _fkg("News")
    NewsReport = _fkg("NewsReport")
    Normalized = _fkg("Normalized")
    OtherMixed = _fkg("OtherMixed")
    Personal = _fkg("Personal")
    PressRelease = _fkg("PressRelease")
    Ready = _fkg("Ready")
    SecFiling = _fkg("SecFiling")
    Uploaded = _fkg("Uploaded")
    IncomeStatement = _fkg("IncomeStatement")
    BalanceSheet = _fkg("BalanceSheet")
    CashFlowStatement = _fkg("CashFlowStatement")
    EquityStatement = _fkg("EquityStatement")
    ComprehensiveIncomeStatement = _fkg("ComprehensiveIncomeStatement")


class PROV:
    """The PROV-O terms finkg uses."""

    Entity = NamedNode(PROV_NS + "Entity")
    Activity = NamedNode(PROV_NS + "Activity")
    Agent = NamedNode(PROV_NS + "Agent")
    Usage = NamedNode(PROV_NS + "Usage")
    wasDerivedFrom = NamedNode(PROV_NS + "wasDerivedFrom")
    wasGeneratedBy = NamedNode(PROV_NS + "wasGeneratedBy")
    wasInformedBy = NamedNode(PROV_NS + "wasInformedBy")
    used = NamedNode(PROV_NS + "used")
    qualifiedUsage = NamedNode(PROV_NS + "qualifiedUsage")
    entity = NamedNode(PROV_NS + "entity")
    generatedAtTime = NamedNode(PROV_NS + "generatedAtTime")
    wasRevisionOf = NamedNode(PROV_NS + "wasRevisionOf")
    startedAtTime = NamedNode(PROV_NS + "startedAtTime")
    endedAtTime = NamedNode(PROV_NS + "endedAtTime")


class DCTERMS:
    """The Dublin Core terms finkg uses."""

    title = NamedNode(DCTERMS_NS + "title")
    source = NamedNode(DCTERMS_NS + "source")
    identifier = NamedNode(DCTERMS_NS + "identifier")
    created = NamedNode(DCTERMS_NS + "created")
    issued = NamedNode(DCTERMS_NS + "issued")
    description = NamedNode(DCTERMS_NS + "description")


class SKOS:
    """The SKOS terms finkg uses."""

    Concept = NamedNode(SKOS_NS + "Concept")
    ConceptScheme = NamedNode(SKOS_NS + "ConceptScheme")
    inScheme = NamedNode(SKOS_NS + "inScheme")
    broader = NamedNode(SKOS_NS + "broader")
    prefLabel = NamedNode(SKOS_NS + "prefLabel")
    altLabel = NamedNode(SKOS_NS + "altLabel")
    notation = NamedNode(SKOS_NS + "notation")
    exactMatch = NamedNode(SKOS_NS + "exactMatch")
    closeMatch = NamedNode(SKOS_NS + "closeMatch")


class RDF:
    type = NamedNode(RDF_NS + "type")
    JSON = NamedNode(RDF_NS + "JSON")


class RDFS:
    label = NamedNode(RDFS_NS + "label")
    comment = NamedNode(RDFS_NS + "comment")
    subClassOf = NamedNode(RDFS_NS + "subClassOf")


class XSD:
    string = NamedNode(XSD_NS + "string")
    integer = NamedNode(XSD_NS + "integer")
    decimal = NamedNode(XSD_NS + "decimal")
    double = NamedNode(XSD_NS + "double")
    boolean = NamedNode(XSD_NS + "boolean")
    date = NamedNode(XSD_NS + "date")
    dateTime = NamedNode(XSD_NS + "dateTime")
    dateTimeStamp = NamedNode(XSD_NS + "dateTimeStamp")
    duration = NamedNode(XSD_NS + "duration")
