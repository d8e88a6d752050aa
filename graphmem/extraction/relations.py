"""Typed relations between concepts from cue phrases, in English and Chinese.

For each pair of neighbouring concept mentions A … B in a sentence the text
between them (and, for some patterns, just before A or after B) is matched
against cue patterns. Each pattern states the direction explicitly:
`forward=True` means source=A (the first mention), target=B.

Directions follow models.RelationType:
  prerequisite  source = learned first,   target = learned later
  uses          source = the user (Y),    target = the used (X)
  requires      source = the requirer (Y), target = the required (X)
  part_of       source = the part,        target = the whole
Concepts discussed together in one sentence without a cue get a weak
related_to (extractor `cooccurrence`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import combinations

from graphmem.models import ConceptMention, ExtractorName, RelationMention, RelationType

P = RelationType.prerequisite
U = RelationType.uses
R = RelationType.requires
PO = RelationType.part_of

CONF_PATTERN = 0.8
CONF_COOCCURRENCE = 0.2
MAX_COOCCURRENCE_SPAN = 200  # characters between the first and last mention of a pair
MAX_COOCCURRENCE_CONCEPTS = 8  # per sentence: bounds the pairs at 28


@dataclass(frozen=True)
class CuePattern:
    type: RelationType
    forward: bool  # True: source = first mention (A), target = second (B)
    between: re.Pattern[str]
    before: re.Pattern[str] | None = None  # must match the text just before A
    after: re.Pattern[str] | None = None  # must match the text just after B


def _re(p: str) -> re.Pattern[str]:
    return re.compile(p, re.IGNORECASE)


_LEARN = r"(?:learn|learning|study|studying|master|mastering|know|understand|cover|covering|take|taking|finish|review|do|get|start with)"
_DET = r"(?:(?:the|a|an|some|basic|basics of|your|about)\s+)*"

EN_PATTERNS: tuple[CuePattern, ...] = (
    # --- prerequisite -------------------------------------------------------
    # "X is a prerequisite for Y", "X is the foundation of Y"
    CuePattern(
        P,
        True,
        _re(
            r"^\s*(?:is|are|was|were)\s+(?:(?:a|an|the|one of the)\s+)?(?:(?:key|basic|necessary|required|important|essential|main|real)\s+)?(?P<cue>prerequisites?|prereqs?|foundations?|basis|groundwork|building blocks?)\s+(?:for|of|to|before)\s+"
            + _DET
            + r"(?:learning\s+|understanding\s+|studying\s+)?$"
        ),
    ),
    # "learn X before Y", "learn X first, then Y"
    CuePattern(
        P,
        True,
        _re(
            r"^\s*(?:first\s*)?,?\s*(?P<cue>before)\s+(?:(?:you|we|i|they)\s+)?(?:(?:can|should|try to)\s+)?(?:(?:learn|study|start|move on to|get to|tackle|try|do|take|go to|jump into|dive into|touch)(?:ing)?\s+)?"
            + _DET
            + r"$"
        ),
        before=_re(_LEARN + r"\s+" + _DET + r"$"),
    ),
    CuePattern(
        P,
        True,
        _re(
            r"^\s*(?:first\s*)?,?\s*(?:and\s+)?(?P<cue>then|after that|afterwards|and only then|before moving on to|before you move on to)\s*,?\s*(?:(?:learn|study|move on to|go to|do|tackle)\s+)?"
            + _DET
            + r"$"
        ),
        before=_re(_LEARN + r"\s+" + _DET + r"$"),
    ),
    # "you need X to understand Y"
    CuePattern(
        P,
        True,
        _re(
            r"^\s*(?:first\s+)?(?P<cue>(?:in order )?to|before you can|before you)\s+(?:(?:really|fully|properly)\s+)?(?:understand|learn|study|master|grasp|tackle|get|do)\s+"
            + _DET
            + r"$"
        ),
        before=_re(
            r"\b(?:need|needs|must|have to|has to|should)\s+(?:to\s+)?(?:(?:know|learn|understand|master|study)\s+)?"
            + _DET
            + r"$"
        ),
    ),
    # "Y builds on X", "Y is built on X", "Y is based on X" (source X)
    CuePattern(
        P,
        False,
        _re(
            r"^\s*(?:really\s+|directly\s+|heavily\s+)?(?P<cue>builds?\s+(?:up\s+)?on|is\s+built\s+(?:up\s+)?on|are\s+built\s+(?:up\s+)?on|is\s+(?:closely\s+)?based\s+on|are\s+(?:closely\s+)?based\s+on|depends?\s+on\s+(?:knowing|understanding)|assumes?\s+(?:you\s+know\s+)?|presupposes)\s+"
            + _DET
            + r"$"
        ),
    ),
    # "to understand Y you need X", "learn Y after X" (source X)
    CuePattern(
        P,
        False,
        _re(
            r"^\s*,?\s*(?:(?:you|one|we)\s+)?(?:first\s+)?(?P<cue>need|needs|must|have to|has to|should)\s+(?:to\s+)?(?:first\s+)?(?:know|learn|understand|master|study|be comfortable with)\s+"
            + _DET
            + r"$"
        ),
        before=_re(r"\bto\s+(?:understand|learn|study|master|grasp|tackle|do)\s+" + _DET + r"$"),
    ),
    # "before (you learn) Y you need X", "to do Y, first learn X", "before Y, learn X first" (source X):
    # the later concept is named first, after "before" or a purpose "to <learn>".
    CuePattern(
        P,
        False,
        _re(
            r"^\s*,?\s*(?:(?:you|we|one|i)\s+)?(?:(?:will|'ll|would)\s+)?(?:first\s+)?(?P<cue>need|needs|must|have to|has to|should|ought to|learn|study|master|know|understand|review|get comfortable with|be comfortable with)\s+(?:to\s+)?(?:first\s+)?(?:(?:know|learn|understand|master|study|review|be comfortable with)\s+)?"
            + _DET
            + r"$"
        ),
        before=_re(
            r"(?:^|[^\w])(?:before\s+(?:(?:you|we|one|i)\s+)?(?:can\s+)?(?:(?:really\s+)?(?:learn|study|understand|master|grasp|tackle|do|start|get to|move on to)(?:ing)?\s+)?|to\s+(?:really\s+)?(?:learn|study|understand|master|grasp|tackle|do)\s+)"
            + _DET
            + r"$"
        ),
    ),
    # Definitional and derivational cues of explanatory text: "Y is defined in terms of X",
    # "Y is a generalization / extension / special case / variant of X", "Y is a theorem
    # about X", "Y is an algorithm for (inference in) X", "Y can be fit using X",
    # "Y follows from X" — Y presupposes X (source X).
    CuePattern(
        P,
        False,
        _re(
            r"^\s*,?\s*(?:which\s+)?(?:is|are|can\s+be|may\s+be|is\s+often|are\s+often|is\s+usually|are\s+usually)\s+(?P<cue>(?:defined|given|formulated|specified|expressed|characteri[sz]ed)\s+(?:in\s+terms\s+of|as|using|via))\s+(?:[\w-]+,?\s+(?:an?\s+)?){0,1}?"
            + _DET
            + r"$"
        ),
    ),
    CuePattern(
        P,
        False,
        _re(
            r"^\s*,?\s*(?:which\s+)?(?:is|are)\s+(?:(?:a|an|the|one)\s+)?(?:[\w-]+\s+){0,2}?(?P<cue>generali[sz]ations?|extensions?|special\s+cases?|limiting\s+cases?|variants?|versions?|elaborations?|refinements?|modifications?|theorems?|statements?|operations?|operators?|algorithms?|methods?|techniques?|procedures?|ways?|instances?|approximations?|analogues?|analogs?|formulations?|forms?|applications?)\s+(?:of|on|about|for|to)\s+(?:(?:[\w-]+ing|inference|learning|estimation|inference\s+and\s+learning)\s+(?:in|of|for|on)?\s*)?"
            + _DET
            + r"$"
        ),
    ),
    CuePattern(
        P,
        False,
        _re(
            r"^\s*,?\s*(?:which\s+)?(?P<cue>generali[sz]es|generali[sz]e|extends|extend|refines|follows\s+(?:directly\s+)?from|follow\s+from|(?:is|are)\s+derived\s+from|(?:can|may)\s+be\s+derived\s+from|(?:is|are|can\s+be)\s+(?:fit|fitted|trained|learned|computed|solved|constructed|estimated|optimi[sz]ed|approximated|proved|proven)\s+(?:using|with|via|by|from|in\s+terms\s+of))\s+(?:the\s+)?(?:(?:definition|closed-form\s+solution|properties)\s+(?:of|to)\s+)?(?:various\s+)?"
            + _DET
            + r"$"
        ),
    ),
    # "X motivates Y": X comes first.
    CuePattern(
        P,
        True,
        _re(
            r"^\s*,?\s*(?:which\s+|that\s+)?(?:is\s+(?:a|an)\s+(?:[\w-]+\s+){0,3}?that\s+)?(?P<cue>motivates|motivate)\s+"
            + _DET
            + r"$"
        ),
    ),
    CuePattern(
        P,
        False,
        _re(
            r"^\s*(?:only\s+)?(?P<cue>after)\s+(?:(?:learning|studying|mastering|you\s+(?:know|learn|have\s+learned|master))\s+)?"
            + _DET
            + r"$"
        ),
        before=_re(_LEARN + r"\s+" + _DET + r"$"),
    ),
    # --- uses: "Y uses X" (source Y), "X is used by Y" (source Y) -------
    CuePattern(
        U,
        True,
        _re(
            r"^\s*(?:also\s+|actually\s+|heavily\s+|internally\s+|mostly\s+|often\s+|usually\s+|typically\s+|can\s+|could\s+|will\s+|may\s+|might\s+|does\s+)?(?P<cue>uses|use|is\s+using|are\s+using|used|makes\s+use\s+of|make\s+use\s+of|relies\s+on|rely\s+on|leverages|is\s+powered\s+by|runs\s+on|employs|uses\s+the)\s+"
            + _DET
            + r"$"
        ),
    ),
    CuePattern(
        U,
        False,
        _re(
            r"^\s*(?:is|are)\s+(?:often\s+|commonly\s+|widely\s+|mostly\s+|also\s+)?(?P<cue>used\s+(?:by|in|inside))\s+"
            + _DET
            + r"$"
        ),
    ),
    # --- requires: "Y requires X" (source Y), "X is required for Y" (source Y) ---
    CuePattern(
        R,
        True,
        _re(
            r"^\s*(?:also\s+|really\s+|usually\s+|always\s+|typically\s+|does\s+)?(?P<cue>requires|require|required|needs|need|depends\s+on|depend\s+on|is\s+dependent\s+on|calls\s+for)\s+"
            + _DET
            + r"$"
        ),
    ),
    CuePattern(
        R,
        False,
        _re(
            r"^\s*(?:is|are)\s+(?:also\s+|always\s+|usually\s+)?(?P<cue>required|needed|necessary|essential)\s+(?:for|by|in)\s+"
            + _DET
            + r"$"
        ),
    ),
    # --- part_of: "X is part of Y" (source X), "Y includes X" (source X) ---
    CuePattern(
        PO,
        True,
        _re(
            r"^\s*(?:is|are)\s+(?:(?:a|an|one|the)\s+)?(?:(?:big|core|key|small|major|central|important)\s+)?(?P<cue>part|parts|component|components|module|modules|chapter|chapters|subfield|subfields|branch|branches|subset|subsets|topic|topics|section|sections|piece|pieces|area|areas|unit|units)\s+(?:of\s+the\s+\w+\s+)?(?:of|in|within)\s+"
            + _DET
            + r"$"
        ),
    ),
    CuePattern(
        PO,
        True,
        _re(
            r"^\s*(?:is|are)\s+(?P<cue>one\s+of\s+the\s+(?:parts|components|modules|chapters|topics|branches|units)\s+of)\s+"
            + _DET
            + r"$"
        ),
    ),
    CuePattern(
        PO,
        True,
        _re(
            r"^\s*(?P<cue>belongs\s+to|belong\s+to|falls\s+under|fall\s+under|is\s+a\s+subtopic\s+of|is\s+covered\s+in)\s+"
            + _DET
            + r"$"
        ),
    ),
    CuePattern(
        PO,
        False,
        _re(
            r"^\s*(?:also\s+)?(?P<cue>includes|include|including|contains|contain|consists\s+of|consist\s+of|covers|cover|is\s+made\s+up\s+of|has\s+parts?\s+like|is\s+composed\s+of)\s*:?\s+"
            + _DET
            + r"$"
        ),
    ),
)

_ZH_LEARN = r"(?:学|学习|掌握|了解|懂|会|学会|搞懂|弄懂|熟悉)"
ZH_PATTERNS: tuple[CuePattern, ...] = (
    # 学Y之前要先学X  (source X)
    CuePattern(
        P,
        False,
        _re(
            r"^\s*(?P<cue>之前|以前|前)[，,]?\s*(?:你|我|我们)?(?:要|需要|得|应该|必须|最好|应当)?(?:先)?"
            + _ZH_LEARN
            + r"?(?:好|一下)?\s*$"
        ),
    ),
    # Y的基础是X  (source X)
    CuePattern(P, False, _re(r"^\s*的(?P<cue>基础|前提|前置知识|前置课程|先修课程?|必备知识)(?:是|就是|为|包括)\s*$")),
    # 学Y要先学X  (source X)
    CuePattern(P, False, _re(r"^\s*(?P<cue>(?:要|需要|得|必须|应该|最好)先)" + _ZH_LEARN + r"?(?:好|一下)?\s*$")),
    # Y建立在X之上 / Y以X为基础  (source X)
    CuePattern(P, False, _re(r"^\s*(?P<cue>建立在|基于|以)\s*$"), after=_re(r"^\s*(?:之上|上面|为基础|的基础上)")),
    # X是Y的基础 / 前提 / 先修课  (source X)
    CuePattern(
        P,
        True,
        _re(r"^\s*(?:是|为|作为)\s*$"),
        after=_re(r"^\s*的(?P<cue>基础|前提|先修课程?|前置(?:知识|课程)?|必备知识|入门)"),
    ),
    # 先学X再学Y / 先X后Y  (source X)
    CuePattern(
        P,
        True,
        _re(r"^\s*[，,]?\s*(?P<cue>然后再|然后|再|之后再|之后|后|接着)\s*" + _ZH_LEARN + r"?\s*$"),
        before=_re(r"先" + _ZH_LEARN + r"?\s*$"),
    ),
    # X学好了才能学Y (source X)
    CuePattern(
        P,
        True,
        _re(
            r"^\s*(?:学好了?|学会了?|掌握了?|懂了)?\s*(?:以后|之后)?[，,]?\s*(?P<cue>才能|才可以|再去)"
            + _ZH_LEARN
            + r"?\s*$"
        ),
    ),
    # Y用到X / Y使用X  (source Y)
    CuePattern(
        U,
        True,
        _re(
            r"^\s*(?:也|还|主要|经常|会|可以|通常|一般|都)?(?P<cue>用到了?|使用了?|用了|采用了?|利用了?|调用了?|用的是|使用的是)\s*$"
        ),
    ),
    # X被Y使用 / X用在Y里  (source Y)
    CuePattern(U, False, _re(r"^\s*(?P<cue>被)\s*$"), after=_re(r"^\s*(?:使用|用到|采用|调用)")),
    # Y需要X / Y依赖X  (source Y)
    CuePattern(R, True, _re(r"^\s*(?:也|还|都|通常|一般|往往)?(?P<cue>需要|依赖于?|要求|离不开|必须有|需要用到)\s*$")),
    # X是Y的一部分  (source X)
    CuePattern(
        PO,
        True,
        _re(r"^\s*(?:是|为)\s*$"),
        after=_re(r"^\s*的(?P<cue>一部分|组成部分|一个(?:部分|模块|分支|章节|组件|子领域)|分支|子领域|模块|章节|组件)"),
    ),
    # X属于Y  (source X)
    CuePattern(PO, True, _re(r"^\s*(?P<cue>属于|隶属于|归于)\s*$")),
    # Y包括X / Y包含X / Y由X组成  (source X)
    CuePattern(PO, False, _re(r"^\s*(?P<cue>包括|包含|涵盖|含有)了?\s*$")),
)

# Mentions joined by these continue the previous mention's role:
# "Django uses SQLAlchemy and Jinja" -> Django uses both.
_COORD = re.compile(
    r"^\s*(?:,|，|、|and|or|as well as|和|跟|与|及|以及|还有|或|或者)\s*(?:and\s+|also\s+)?(?:the\s+)?$", re.IGNORECASE
)


def _find_cue(
    pattern: CuePattern, text: str, a: ConceptMention, b: ConceptMention, sent_start: int, sent_end: int
) -> tuple[int, int] | None:
    between = text[a.end : b.start]
    m = pattern.between.match(between)
    if m is None:
        return None
    cue: tuple[int, int] | None = None
    if "cue" in m.groupdict() and m.group("cue") is not None:
        cue = (a.end + m.start("cue"), a.end + m.end("cue"))
    if pattern.before is not None:
        before_start = max(sent_start, a.start - 60)
        mb = pattern.before.search(text[before_start : a.start])
        if mb is None:
            return None
    if pattern.after is not None:
        ma = pattern.after.match(text[b.end : min(sent_end, b.end + 30)])
        if ma is None:
            return None
        if "cue" in ma.groupdict() and ma.group("cue") is not None:
            cue = (b.end + ma.start("cue"), b.end + ma.end("cue"))
    if cue is None:
        s = a.end + (len(between) - len(between.lstrip()))
        cue = (s, s + len(between.strip()) or s)
    return cue


def _make(
    text: str,
    rtype: RelationType,
    src: ConceptMention,
    tgt: ConceptMention,
    cue: tuple[int, int],
    extractor: ExtractorName,
    conf: float,
) -> RelationMention:
    return RelationMention(
        source_key=src.key,
        source_name=src.name,
        type=rtype,
        target_key=tgt.key,
        target_name=tgt.name,
        start=cue[0],
        end=cue[1],
        extractor=extractor,
        confidence=conf,
        cue=text[cue[0] : cue[1]],
    )


# A sentence-initial pronoun ("It", "This", "These models") standing for the turn's topic.
_PRONOUN = re.compile(
    r"\s*(?P<pron>(?:it|they|this|these)(?:\s+(?:concept|method|model|models|algorithm|technique|theorem|result|approach|distribution|operation|idea|definition))?)\b",
    re.IGNORECASE,
)
CONF_PRONOUN = 0.6


def _topic(text: str, mentions: list[ConceptMention]) -> ConceptMention | None:
    """The mention that opens the turn ("The X of …", "X is …"), if one does."""
    if not mentions:
        return None
    first = mentions[0]
    head = text[: first.start].strip().lower()
    return first if head in ("", "the", "a", "an", "in", "a(n)") else None


MAX_CUE_WORDS = 2  # open-vocabulary mentions a cue may hold ("in terms of", "a generalization of")


def _cue_pair(
    patterns: tuple[CuePattern, ...],
    text: str,
    sent: list[ConceptMention],
    i: int,
    s_start: int,
    s_end: int,
) -> tuple[CuePattern | None, tuple[int, int] | None, int]:
    """The first pattern joining ``sent[i]`` to a following mention, the cue and that mention's index.

    The next mention is tried first; then one or two further on, when the mentions skipped are
    open-vocabulary nouns of the cue itself: the noun chunker reads "terms" in "are defined in terms
    of", "generalization" in "is a generalization of" and "theorem" in "is a theorem about" as
    concepts, and the pair the cue joins is then not neighbouring. The pattern still has to match
    the whole text between the pair, skipped words included, so a skipped word is a cue word.
    """
    a = sent[i]
    for j in range(i + 1, min(len(sent), i + 2 + MAX_CUE_WORDS)):
        if j > i + 1 and sent[j - 1].in_catalog:
            break  # a catalog concept in between is a concept, not a cue word
        b = sent[j]
        if a.key == b.key:
            continue
        for pat in patterns:
            cue = _find_cue(pat, text, a, b, s_start, s_end)
            if cue is not None:
                return pat, cue, j
    return None, None, i + 1


class _Relations:
    """The relations found so far in a turn, each (source, type, target) once, in finding order."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.found: list[RelationMention] = []
        self._seen: set[tuple[str, str, str]] = set()

    def add(
        self,
        rtype: RelationType,
        src: ConceptMention,
        tgt: ConceptMention,
        cue: tuple[int, int],
        extractor: ExtractorName,
        conf: float,
    ) -> None:
        sig = (src.key, rtype.value, tgt.key)
        if sig not in self._seen:
            self._seen.add(sig)
            self.found.append(_make(self.text, rtype, src, tgt, cue, extractor, conf))


def _coordinated(text: str, sent: list[ConceptMention], j: int) -> list[ConceptMention]:
    """``sent[j]`` and the mentions coordinated after it: "Django uses X and Y" -> [X, Y]."""
    rights = [sent[j]]
    k = j
    while k + 1 < len(sent) and _COORD.match(text[sent[k].end : sent[k + 1].start]):
        rights.append(sent[k + 1])
        k += 1
    return rights


def _cue_relations(
    patterns: tuple[CuePattern, ...],
    text: str,
    sent: list[ConceptMention],
    span: tuple[int, int],
    rels: _Relations,
) -> set[frozenset[str]]:
    """Cue-pattern relations between the sentence's neighbouring mentions; returns the key pairs
    they linked (those get no co-occurrence)."""
    linked: set[frozenset[str]] = set()
    for i in range(len(sent) - 1):
        a = sent[i]
        pat, cue, j = _cue_pair(patterns, text, sent, i, span[0], span[1])
        if pat is None or cue is None:
            continue
        for r in _coordinated(text, sent, j):
            src, tgt = (a, r) if pat.forward else (r, a)
            if src.key == tgt.key:
                continue
            rels.add(pat.type, src, tgt, cue, ExtractorName.pattern, CONF_PATTERN)
            linked.add(frozenset((src.key, tgt.key)))
    return linked


def _pronoun_relation(
    patterns: tuple[CuePattern, ...],
    text: str,
    sent: list[ConceptMention],
    span: tuple[int, int],
    topic: ConceptMention | None,
    rels: _Relations,
) -> None:
    """ "X is … . It is a generalization of Y": a sentence opening with a pronoun is about the turn's
    topic (the mention that opens the turn); the first pattern joining the pronoun to the sentence's
    first mention relates the topic to it."""
    s_start, s_end = span
    if topic is None or not sent or s_start <= topic.end:
        return
    m = _PRONOUN.match(text, s_start, sent[0].start)
    if m is None:
        return
    ref = topic.model_copy(update={"start": m.start("pron"), "end": m.end("pron")})
    b = sent[0]
    for pat in patterns:
        if pat.before is not None or b.key == topic.key:
            continue
        cue = _find_cue(pat, text, ref, b, s_start, s_end)
        if cue is None:
            continue
        src, tgt = (topic, b) if pat.forward else (b, topic)
        rels.add(pat.type, src, tgt, cue, ExtractorName.pattern, CONF_PRONOUN)
        return


def _cooccurrences(sent: list[ConceptMention], linked: set[frozenset[str]], rels: _Relations) -> None:
    """Weak ``related_to`` for the sentence's other concept pairs: the first
    ``MAX_COOCCURRENCE_CONCEPTS`` distinct concepts, pairs at most ``MAX_COOCCURRENCE_SPAN`` apart."""
    uniq: list[ConceptMention] = []
    for mention in sent:
        if all(mention.key != u.key for u in uniq):
            uniq.append(mention)
    for a, b in combinations(uniq[:MAX_COOCCURRENCE_CONCEPTS], 2):
        pair = frozenset((a.key, b.key))
        if pair in linked or b.end - a.start > MAX_COOCCURRENCE_SPAN:
            continue
        linked.add(pair)
        rels.add(RelationType.related_to, a, b, (a.start, b.end), ExtractorName.cooccurrence, CONF_COOCCURRENCE)


def extract_relations(
    text: str, language: str, sentences: list[tuple[int, int]], mentions: list[ConceptMention]
) -> list[RelationMention]:
    """Cue-pattern relations plus sentence co-occurrence. `mentions` must be sorted by start.

    Per sentence, in this order (a relation found earlier in the turn is not repeated):

    1. cue patterns between neighbouring mentions (``_cue_relations``), the right-hand side
       extended over a coordinated list;
    2. a sentence opening with a pronoun relates the turn's topic to its first mention
       (``_pronoun_relation``);
    3. weak co-occurrence for the pairs step 1 did not link (``_cooccurrences``).
    """
    patterns = ZH_PATTERNS if language == "zh" else EN_PATTERNS
    # Latin cue phrases occur in Chinese turns only rarely; English patterns also run
    # on Chinese turns so that "Django uses SQLAlchemy" inside one is still found.
    if language == "zh":
        patterns = patterns + EN_PATTERNS
    rels = _Relations(text)
    topic = _topic(text, mentions)
    for span in sentences:
        sent = [m for m in mentions if m.start >= span[0] and m.end <= span[1]]
        linked = _cue_relations(patterns, text, sent, span, rels)
        _pronoun_relation(patterns, text, sent, span, topic, rels)
        _cooccurrences(sent, linked, rels)
    return rels.found
