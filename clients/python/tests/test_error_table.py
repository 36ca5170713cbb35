"""The exception table mirrors Sources/LoopdProtocol/ErrorCode.swift (and the
protocol document's table), so a code added on one side fails here."""

import re

import loopd
from loopd.errors import ERROR_CLASSES, ERROR_TABLE

from conftest import REPO


def swift_codes():
    source = (REPO / "Sources/LoopdProtocol/ErrorCode.swift").read_text()
    body = source.split("public enum ErrorCode", 1)[1].split("\n}", 1)[0]
    codes = []
    for m in re.finditer(r'^\s*case\s+`?(\w+)`?(?:\s*=\s*"([^"]+)")?\s*$', body, re.MULTILINE):
        codes.append(m.group(2) or m.group(1))
    return codes


def test_table_matches_the_swift_enum_case_for_case():
    codes = swift_codes()
    assert len(codes) >= 15
    assert [row[0] for row in ERROR_TABLE] == codes


def test_every_code_has_its_own_exported_subclass():
    names = set()
    for code, name, kind, _doc in ERROR_TABLE:
        cls = getattr(loopd, name)
        assert ERROR_CLASSES[code] is cls and cls.code == code
        assert issubclass(cls, loopd.JobError if kind == "job" else loopd.LoopdError)
        assert name in loopd.__all__
        names.add(name)
    assert len(names) == len(ERROR_TABLE)
    assert {c for c, _n, k, _d in ERROR_TABLE if k == "job"} == {"timeout", "job_failed", "cancelled", "expired"}


def test_the_protocol_document_lists_the_same_codes():
    doc = (REPO / "docs/PROTOCOL.md").read_text()
    table = doc.split("## Error codes", 1)[1].split("\n## ", 1)[0]
    documented = re.findall(r"^\| `([a-z_]+)` \|", table, re.MULTILINE)
    assert documented == [row[0] for row in ERROR_TABLE]


def test_an_unknown_code_is_a_plain_loopd_error():
    e = loopd.error_from_reply({"id": 1, "ok": False, "error": {"code": "brand_new", "message": "m"}})
    assert type(e) is loopd.LoopdError and e.code == "brand_new" and e.message == "m"
