"""Structured output: the schema helpers and the validator (checked against jsonschema)."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest

from prose.llm import CONDITION_SCHEMA, SchemaDefinitionError, choice_schema, schema_from_fields
from prose.llm.schema import (
    check_reply,
    is_strict_compatible,
    parse_json_reply,
    response_format,
    validate,
)

REVIEW: dict[str, Any] = {
    "type": "object",
    "properties": {
        "verdict": {"type": "string", "enum": ["accept", "revise", "reject"]},
        "score": {"type": "number", "minimum": 0, "maximum": 1},
        "issues": {
            "type": "array",
            "items": {"$ref": "#/$defs/issue"},
            "maxItems": 2,
        },
        "count": {"type": "integer"},
        "note": {"type": ["string", "null"]},
    },
    "required": ["verdict", "issues"],
    "additionalProperties": False,
    "$defs": {
        "issue": {
            "type": "object",
            "properties": {"line": {"type": "integer"}, "text": {"type": "string", "minLength": 1}},
            "required": ["text"],
        }
    },
}

CASES: list[tuple[Any, list[str]]] = [
    ({"verdict": "accept", "issues": []}, []),
    ({"verdict": "accept", "issues": [], "count": 2.0, "note": None}, []),
    ({"verdict": "maybe", "issues": []}, ['$.verdict: "maybe" is not one of "accept", "revise", "reject"']),
    ({"issues": []}, ["$: missing required property `verdict`"]),
    ({"verdict": "accept", "issues": [], "extra": 1}, ["$: unexpected property `extra`"]),
    ({"verdict": "accept", "issues": [], "score": 2}, ["$.score: expected at most 1, got 2"]),
    ({"verdict": "accept", "issues": [], "count": True}, ["$.count: expected integer, got boolean"]),
    ({"verdict": "accept", "issues": [{"line": 1}]}, ["$.issues[0]: missing required property `text`"]),
    ({"verdict": "accept", "issues": [{"text": ""}]}, ["$.issues[0].text: expected at least 1 characters"]),
    (
        {"verdict": "accept", "issues": [{"text": "a"}] * 3},
        ["$.issues: expected at most 2 items, got 3"],
    ),
    ({"verdict": "accept", "issues": [], "note": 3}, ["$.note: expected string or null, got integer"]),
    (["not", "an", "object"], ["$: expected object, got array"]),
]


@pytest.mark.parametrize(("instance", "problems"), CASES)
def test_validate_agrees_with_jsonschema(instance: Any, problems: list[str]) -> None:
    assert validate(instance, REVIEW) == problems
    assert jsonschema.Draft202012Validator(REVIEW).is_valid(instance) == (not problems)


def test_enum_does_not_confuse_true_and_one() -> None:
    schema = {"enum": [1, "a"]}
    assert validate(True, schema) == ['$: true is not one of 1, "a"']
    assert validate(1.0, schema) == []


def test_any_of_and_one_of() -> None:
    schema = {"anyOf": [{"type": "string"}, {"type": "integer"}]}
    assert validate(3, schema) == []
    assert validate(3.5, schema) == ["$: does not match any of the allowed shapes"]
    one = {"oneOf": [{"type": "number"}, {"type": "integer"}]}
    assert validate(2, one) == ["$: must match exactly one of the allowed shapes, matches 2"]


def test_schema_from_fields() -> None:
    schema = schema_from_fields({"accept": "boolean", "notes": "string", "tags": "string[]"})
    assert schema == {
        "type": "object",
        "properties": {
            "accept": {"type": "boolean"},
            "notes": {"type": "string"},
            "tags": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["accept", "notes", "tags"],
        "additionalProperties": False,
    }
    assert is_strict_compatible(schema)
    with pytest.raises(SchemaDefinitionError, match="field `x` has unknown type `date`"):
        schema_from_fields({"x": "date"})


def test_strict_compatibility() -> None:
    assert is_strict_compatible(CONDITION_SCHEMA)
    assert is_strict_compatible(choice_schema(["a", "b"]))
    assert not is_strict_compatible(REVIEW)  # optional properties
    assert not is_strict_compatible({"type": "object", "properties": {}})


def test_response_format() -> None:
    assert response_format(CONDITION_SCHEMA, name="judge: verdict!", strict=None) == {
        "type": "json_schema",
        "json_schema": {"name": "judge_verdict", "schema": CONDITION_SCHEMA, "strict": True},
    }
    assert response_format(REVIEW, name="", strict=True)["json_schema"]["name"] == "output"


def test_parse_json_reply() -> None:
    assert parse_json_reply(' {"a": 1} ') == ({"a": 1}, None)
    assert parse_json_reply('```json\n{"a": 1}\n```') == ({"a": 1}, None)
    value, problem = parse_json_reply("sure! here it is")
    assert value is None
    assert problem == "the reply is not valid JSON (Expecting value at line 1 column 1)"


def test_check_reply() -> None:
    schema = schema_from_fields({"ok": "bool"})
    assert check_reply('{"ok": false}', schema) == ({"ok": False}, [])
    assert check_reply('{"ok": "no"}', schema) == ({"ok": "no"}, ["$.ok: expected boolean, got string"])


TYPED = {
    "verdict": '"PASS" | "FAIL"',
    "subtasks": '{ kind: "code" | "docs", instruction: string }[]',
    "notes": "string?",
    "summary": "{ title: string, risk?: 1 | 2 | 3 }",
}


def test_typed_fields_become_enums_nested_objects_and_nullable_fields() -> None:
    schema = schema_from_fields(TYPED)
    properties = schema["properties"]
    assert properties["verdict"] == {"type": "string", "enum": ["PASS", "FAIL"]}
    item = properties["subtasks"]["items"]
    assert item["properties"]["kind"] == {"type": "string", "enum": ["code", "docs"]}
    assert item["required"] == ["kind", "instruction"] and item["additionalProperties"] is False
    assert properties["notes"] == {"anyOf": [{"type": "string"}, {"type": "null"}]}
    risk = properties["summary"]["properties"]["risk"]
    assert risk == {"anyOf": [{"type": "integer", "enum": [1, 2, 3]}, {"type": "null"}]}
    # optional fields stay required (written as null), so strict structured output holds
    assert is_strict_compatible(schema)
    jsonschema.Draft202012Validator.check_schema(schema)


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        ({"verdict": "PASSED"}, '$.verdict: "PASSED" is not one of "PASS", "FAIL"'),
        ({"subtasks": [{"kind": "tests", "instruction": "x"}]},
         '$.subtasks[0].kind: "tests" is not one of "code", "docs"'),
        ({"subtasks": [{"kind": "code"}]}, "$.subtasks[0]: missing required property `instruction`"),
        ({"summary": {"title": "t", "risk": 1, "owner": "me"}},
         "$.summary: unexpected property `owner`"),
        ({"notes": 3}, "$.notes: does not match any of the allowed shapes"),
    ],
)
def test_a_reply_outside_a_typed_schema_is_refused_where_it_is_wrong(
    reply: dict[str, Any], problem: str
) -> None:
    good: dict[str, Any] = {
        "verdict": "PASS",
        "subtasks": [{"kind": "code", "instruction": "write it"}],
        "notes": None,
        "summary": {"title": "t", "risk": None},
    }
    schema = schema_from_fields(TYPED)
    assert validate(good, schema) == []
    assert problem in validate({**good, **reply}, schema)
    assert not jsonschema.Draft202012Validator(schema).is_valid({**good, **reply})


def test_the_embedded_grammar_bounds_the_free_strings_of_nested_objects() -> None:
    from prose.llm.local_schema import bounded_schema, is_free_string

    schema = schema_from_fields(TYPED)
    bounded = bounded_schema(schema, 400)
    item = bounded["properties"]["subtasks"]["items"]
    assert "maxLength" in item["properties"]["instruction"]
    assert item["properties"]["kind"] == {"type": "string", "enum": ["code", "docs"]}
    assert bounded["properties"]["subtasks"]["maxItems"] == 3
    assert "maxLength" in bounded["properties"]["notes"]["anyOf"][0]

    def free(node: Any) -> bool:
        if isinstance(node, dict):
            return is_free_string(node) or any(free(value) for value in node.values())
        return isinstance(node, list) and any(free(value) for value in node)

    assert not free(bounded)  # every string of the grammar can end
    # what the bounded schema accepts, the caller's schema accepts
    reply = {"verdict": "FAIL", "subtasks": [], "notes": None, "summary": {"title": "", "risk": 2}}
    assert validate(reply, bounded) == [] and validate(reply, schema) == []
