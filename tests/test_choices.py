"""The finite reply sets that readers decode as a choice (`reader/choices.py`)."""

from __future__ import annotations

import json

from finkg.reader.choices import finite_replies
from finkg.reader.read import narrow_schema
from finkg.reader.schemas import EntitySelection, ImpactCompact, ImpactPrediction

IDS = {"N1", "N2", "N3", "F1", "F2"}


def test_the_compact_impact_reply_is_every_signal_triple_with_up_to_two_ids() -> None:
    replies = finite_replies(narrow_schema(ImpactCompact.model_json_schema(), IDS))
    assert replies is not None
    assert len(replies) == len(set(replies)) == 3**3 * (1 + 5 + 5 * 5)  # 837
    for text in replies:  # each one a reply the contract accepts, and only those
        reply = ImpactCompact.model_validate_json(text)
        assert set(reply.ids) <= IDS
        assert list(json.loads(text)) == ["1D", "3D", "5D", "ids"]  # the schema's order
    assert '{"1D": "0", "3D": "-1", "5D": "+1", "ids": ["F2", "N1"]}' in replies


def test_no_evidence_leaves_only_the_empty_citation_list() -> None:
    replies = finite_replies(narrow_schema(ImpactCompact.model_json_schema(), set()))
    assert replies is not None and len(replies) == 27
    assert all(text.endswith('"ids": []}') for text in replies)


def test_a_narrowed_selection_is_finite_and_a_free_one_is_not() -> None:
    schema = EntitySelection.model_json_schema()
    assert finite_replies(schema) is None  # any string, any number of them
    replies = finite_replies(narrow_schema(schema, {"a", "b"}))
    assert replies is not None and len(replies) == 1 + 2 + 4
    assert '{"selected": ["b", "a"]}' in replies


def test_free_text_optional_keys_and_too_many_replies_fall_back_to_the_grammar() -> None:
    assert finite_replies(narrow_schema(ImpactPrediction.model_json_schema(), IDS)) is None
    optional = {
        "type": "object",
        "properties": {"up": {"type": "boolean"}},
        "required": [],
        "additionalProperties": False,
    }
    assert finite_replies(optional) is None  # `{}` or `{"up": ...}`: not walked
    many = narrow_schema(ImpactCompact.model_json_schema(), {f"N{i}" for i in range(1, 31)})
    assert finite_replies(many) is None  # 27 x 931 replies
    assert finite_replies(many, limit=30_000) is not None
