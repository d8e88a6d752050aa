"""The Chinese name-likeness model (graphmem/zh_name_likeness.py, data/zh_name_likeness.json): reproducible
from the hand-labelled block items, plain weights, and used by the block's specificity judgement only
where nothing else says the item is the user's."""

from __future__ import annotations

import json
from importlib import resources

from graphmem import zh_name_likeness as nl
from graphmem.models import ConceptNode
from graphmem.specificity import SpecificityConfig, language_reason, node_reason

CFG = SpecificityConfig()


def _shipped() -> dict:
    return json.loads(resources.files("graphmem").joinpath("data", nl.MODEL_FILE).read_text(encoding="utf-8"))


def test_model_file_is_plain_weights_with_a_threshold_chosen_out_of_fold() -> None:
    data = _shipped()
    assert 0.0 < data["threshold"] < 0.5  # a filter of the clearly phrase-like, not a coin toss
    assert all(len(v) == 2 and all(isinstance(w, float) for w in v) for v in data["weights"].values())
    # An item only the assistant said needs more of a name's look than one the user said.
    assert data["threshold"] < data["threshold_assistant_only"] < 0.5
    cv = data["cv"]
    # At most 5 % of the good items are lost out of fold (the trainer's MAX_GOOD_LOSS), and the filter helps.
    assert cv["oof_good_lost"] <= 0.05 * cv["good"]
    assert cv["oof_precision_kept"] > cv["oof_precision_before"]


def test_training_reproduces_the_shipped_model() -> None:
    """eval/train_zh_name_likeness.py on the label files in the repository (references only) gives the
    shipped weights and thresholds; the held-out sample fresh7 is not among its inputs."""
    from eval import block_sample as bs
    from eval import train_zh_name_likeness as tr

    assert bs.FRESH7_LABELS not in tr.LABEL_FILES
    out = tr.train(tr.rows())
    shipped = _shipped()
    assert out["threshold"] == shipped["threshold"]
    assert out["threshold_assistant_only"] == shipped["threshold_assistant_only"]
    assert out["weights"].keys() == shipped["weights"].keys()
    assert max(abs(out["weights"][k][1] - shipped["weights"][k][1]) for k in out["weights"]) < 1e-4


def test_names_score_above_recited_phrases() -> None:
    # Hand-picked: well-known names (a singer, a palace, a park, a film) against pieces of a sentence a
    # speaker recited (a cost "高达", a verb phrase, a description of an audience).
    names = ["周杰伦", "故宫", "颐和园", "卧虎藏龙"]
    phrases = ["成本高达", "体验高科技", "极具人气", "北京年轻人"]
    assert min(nl.probability(k) for k in names) > max(nl.probability(k) for k in phrases)


def test_a_phrase_like_item_said_once_stays_out_unless_the_conversation_makes_it_its_own() -> None:
    key = "极具人气"
    assert nl.probability(key) < nl.model().threshold
    assert language_reason(key, 1, CFG) == "unlike_a_name"
    assert language_reason(key, CFG.repeat_mentions, CFG) is None  # the conversation keeps coming back to it
    once = ConceptNode(key=key, name=key, assistant_mentions=1)
    both = ConceptNode(key=key, name=key, user_mentions=1, assistant_mentions=1)
    assert node_reason(once, CFG) == "unlike_a_name"
    assert node_reason(both, CFG) is None  # both sides name it: the topic they share


def test_english_and_catalog_items_are_not_judged_by_it() -> None:
    assert language_reason("jump scares", 1, CFG) is None
    catalog = ConceptNode(key="流浪地球", name="流浪地球", assistant_mentions=1, in_catalog=True)
    assert node_reason(catalog, CFG) is None


def test_a_detail_only_the_assistant_recited_needs_more_of_a_names_look() -> None:
    # Hand-picked recited details of KdConv's kind (a star sign, a birthplace, an address): each passes the
    # filter when the user says it, stays out when only the assistant said it once, and is back when the
    # conversation keeps coming back to it.
    for key in ("白羊座", "香港南丫岛", "北京市中心"):
        assert nl.model().threshold <= nl.probability(key) < nl.model().threshold_assistant_only
        assert node_reason(ConceptNode(key=key, name=key, user_mentions=1), CFG) is None
        assert node_reason(ConceptNode(key=key, name=key, assistant_mentions=1), CFG) == "unlike_a_name_of_assistant"
        assert node_reason(ConceptNode(key=key, name=key, assistant_mentions=CFG.repeat_mentions), CFG) is None
    # A well-known name the assistant suggests keeps its place.
    for key in ("故宫", "天安门广场"):
        assert node_reason(ConceptNode(key=key, name=key, assistant_mentions=1), CFG) is None
