"""Search quality: for plain-language needs, the right shipped microservice ranks first."""

from __future__ import annotations

import pytest
import yaml

from dagsmith.catalog.search import search
from tests.conftest import ROOT

NEEDS = yaml.safe_load((ROOT / "tests" / "data" / "search_needs.yaml").read_text())


@pytest.mark.parametrize("case", NEEDS, ids=[c["expect"] for c in NEEDS])
def test_right_microservice_is_top_1(case, catalog_settings, embedder):
    hits = search(case["need"], k=3, settings=catalog_settings, embedder=embedder)
    assert hits[0].name in [case["expect"], *case.get("also", [])], [(h.name, h.score) for h in hits]
    assert hits[0].score > hits[-1].score or len({h.score for h in hits}) == 1


def test_empty_query_is_a_clear_error(catalog_settings, embedder):
    with pytest.raises(ValueError, match="empty"):
        search("   ", settings=catalog_settings, embedder=embedder)
