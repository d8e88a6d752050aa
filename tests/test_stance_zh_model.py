"""The trained Chinese stance model (graphmem/extraction/zh/stance_model.py) and how stances.py uses it.

Sentences here are WRITTEN BY HAND for these tests and are in no training file of eval/devsets.
Model-free tests pin the contract (features, guards, abstaining, rules winning); the end-to-end
ones check the shipped weights on clear cue-less phrasings, and that the rules' whose-stance and
negation decisions are never overridden.
"""

from __future__ import annotations

import json

import pytest

from graphmem.extraction.extractor import ConceptExtractor
from graphmem.extraction.stance_cues import cues
from graphmem.extraction.zh import stance_model
from graphmem.models import Catalog, CatalogConcept, ConceptMention, ExtractorName, Stance
from tests.test_stances_en import stance_of

CS = cues("zh")


def _mention(text: str, name: str, in_catalog: bool = True) -> ConceptMention:
    start = text.index(name)
    return ConceptMention(
        key=name.lower(),
        name=name,
        surface=name,
        language="zh",
        start=start,
        end=start + len(name),
        confidence=0.95 if in_catalog else 0.5,
        extractor=ExtractorName.catalog if in_catalog else ExtractorName.noun_chunk,
        in_catalog=in_catalog,
    )


def test_context_masks_names_and_runs_to_the_end_of_the_turn() -> None:
    text = "以前觉得R很难。现在用R做统计很顺手。"
    m = [_mention(text, "R"), _mention(text[8:], "R")]
    m[1] = m[1].model_copy(update={"start": 8 + m[1].start, "end": 8 + m[1].end})
    sents = [(0, 8), (8, len(text))]
    assert stance_model.context_of(text, sents, m, m[0]) == "以前觉得X很难。现在用X做统计很顺手。"


def test_features_mark_negation_subject_time_and_questions() -> None:
    f = stance_model.features("以前X我没学过，现在已经会了", CS)
    assert f["m:past_then_now"] == 1.0 and f["s:self"] == 1.0
    assert {"n:学", "n:学过"} <= f.keys()  # what follows 没
    assert "l:会了" in f and "l:学过" not in f  # the newest clause's bigrams
    q = stance_model.features("X到底是怎么回事？", CS)
    assert q["q:question"] == 1.0 and q["q:wh"] == 1.0
    assert stance_model.features("听说X很有名", CS)["s:hearsay"] == 1.0


def test_the_model_is_not_asked_about_hearsay_others_lists_or_decided_names() -> None:
    for text, name in [("听说火锅很好吃", "火锅"), ("我爸妈都知道邓丽君", "邓丽君")]:
        m = [_mention(text, name)]
        assert stance_model.asked(text, [(0, len(text))], m, set(), CS) == []
    text = "有刘嘉玲，张曼玉，林青霞"
    m = [_mention(text, n) for n in ("刘嘉玲", "张曼玉", "林青霞")]
    assert stance_model.asked(text, [(0, len(text))], m, set(), CS) == []
    text = "周末想去爬泰山"
    m = [_mention(text, "泰山")]
    assert stance_model.asked(text, [(0, len(text))], m, {"泰山"}, CS) == []
    assert [x.name for x, _ in stance_model.asked(text, [(0, len(text))], m, set(), CS)] == ["泰山"]
    weak = [_mention(text, "泰山", in_catalog=False)]  # an open-vocabulary noun: never asked
    assert stance_model.asked(text, [(0, len(text))], weak, set(), CS) == []


def test_the_model_abstains_below_its_threshold() -> None:
    m = stance_model.StanceModel({"w:a": (2.0, 0.0, 0.0, 0.0, 0.0)}, (0.0,) * 5, 0.6, "test")
    assert m.decide({"w:a": 1.0})[0] is Stance.interested  # e^2 / (e^2 + 4) = 0.65
    assert m.decide({})[0] is None  # uniform: 0.2 < 0.6
    strict = stance_model.StanceModel(m.weights, m.bias, 0.7, "test")
    assert strict.decide({"w:a": 1.0})[0] is None


def test_shipped_weights_are_plain_json_with_one_weight_per_class() -> None:
    from importlib import resources

    raw = json.loads(
        resources.files("graphmem.extraction").joinpath("data", stance_model.MODEL_FILE).read_text("utf-8")
    )
    assert raw["classes"] == list(stance_model.CLASSES)
    assert len(raw["bias"]) == 5 and all(len(w) == 5 for w in raw["weights"].values())
    assert 0.0 < raw["threshold"] < 1.0
    assert stance_model.shipped() is not None


@pytest.fixture(scope="module")
def ex() -> ConceptExtractor:
    names = ["油画", "《资本论》", "Kubernetes", "滑雪", "Swift", "Go", "SQL", "爵士乐"]
    return ConceptExtractor(Catalog(concepts=[CatalogConcept(name=n) for n in names]))


@pytest.mark.parametrize(
    ("text", "name", "expected"),
    [
        ("油画我一直想系统地学", "油画", Stance.interested),
        ("《资本论》我啃了三遍还是没读明白", "《资本论》", Stance.confused),
        ("Kubernetes集群我在公司一个人维护了两年", "Kubernetes", Stance.knows),  # no cue: the model
    ],
)
def test_cue_less_phrasings_get_the_models_stance(ex: ConceptExtractor, text: str, name: str, expected: Stance) -> None:
    assert stance_of(ex, text, name) is expected


# Wrong (confused) from the refit on corpus8/9 and the real KdConv turns of stances_real2_zh to the refit on
# corpus12/13 (2026-12-04): "找个老师" (find a teacher) with 一直想 (have long wanted) is a wish.
def test_wanting_a_teacher_is_a_wish(ex: ConceptExtractor) -> None:
    assert stance_of(ex, "油画我一直想找个老师系统地学", "油画") is Stance.interested


def test_rules_win_where_they_speak(ex: ConceptExtractor) -> None:
    # Someone else's taste, and "never learnt": the rules say no stance; the model is not asked.
    assert stance_of(ex, "我女朋友特别喜欢Swift，我自己没学过", "Swift") is None
    # Written for this test: a teacher's students, a team's intern (stance_zh.yaml `others`); the
    # speaker describing themself keeps the stance.
    assert stance_of(ex, "我的学生最近都搞不懂Python", "Python") is None
    assert stance_of(ex, "我们组的实习生完全不会SQL", "SQL") is None
    assert stance_of(ex, "我是学生，我很喜欢Python", "Python") is Stance.interested
    assert stance_of(ex, "我特别想学Go", "Go") is Stance.interested
    assert stance_of(ex, "以前我不会SQL，现在已经会了", "SQL") is Stance.knows
    # A plain fact about the name is no stance.
    assert stance_of(ex, "爵士乐起源于新奥尔良", "爵士乐") is None


def test_without_the_model_only_the_rules_speak(ex: ConceptExtractor) -> None:
    stance_model.install(None, active=False)
    try:
        assert stance_of(ex, "Kubernetes集群我在公司一个人维护了两年", "Kubernetes") is None
        assert stance_of(ex, "我特别想学Go", "Go") is Stance.interested
    finally:
        stance_model.install(None)
    assert stance_of(ex, "Kubernetes集群我在公司一个人维护了两年", "Kubernetes") is Stance.knows


def test_corpus2_file_is_well_formed() -> None:
    """eval/devsets/stances_corpus2_zh.jsonl: Chinese items with the concept in the text and a known label."""
    from pathlib import Path

    from eval.natural_stance_eval import load

    items = load(Path(__file__).resolve().parent.parent / "eval" / "devsets" / "stances_corpus2_zh.jsonl")
    assert len(items) == 500 and len({it["id"] for it in items}) == 500
    assert all(it["language"] == "zh" and it["concept"] in it["text"] for it in items)


def test_training_reproduces_the_shipped_model(shared_data: object) -> None:
    """eval/train_stance_zh.py's derivation and one fit at the shipped C give the shipped weights
    (the cross-validated choice of C and threshold runs in `python -m eval.train_stance_zh --check`)."""
    from importlib import resources

    from eval import train_stance_zh as ts

    shipped = json.loads(
        resources.files("graphmem.extraction").joinpath("data", stance_model.MODEL_FILE).read_text("utf-8")
    )
    items = [it for it in ts.derive() if it.writer != "kdconv-check"]
    counts = {w: sum(it.writer == w for it in items) for w in sorted({it.writer for it in items})}
    assert counts == shipped["trained_on"]
    m = ts._fit(items, shipped["C"], shipped["asked_weight"])
    assert m.weights.keys() == shipped["weights"].keys()
    assert max(abs(a - b) for k, w in m.weights.items() for a, b in zip(w, shipped["weights"][k])) < 1e-3
