"""The user's stance toward a concept: interested, confused, knows, dislikes.

Cue patterns look at the text of the sentence just before a mention
("I want to learn X", `我想学X`) or just after it ("X makes no sense",
`X我不懂`). Stances are checked in a fixed order — dislikes, confused, knows,
interested — because the stronger, negative readings contain the weaker
positive cues ("not interested in X" contains "interested in").

Negation flips or cancels: "I don't want to learn X" -> dislikes (no longer
wants), "I don't know X" -> confused (low confidence), "I never used X" ->
nothing. Hedging ("maybe", "I think", `可能`) lowers confidence.
The caller passes only role=user turns here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from graphmem.models import ConceptMention, Stance, StanceMention

CONF_STANCE = 0.8
CONF_HEDGED = 0.5
CONF_NEGATED = 0.5

I_ = re.IGNORECASE


@dataclass(frozen=True)
class StancePattern:
    stance: Stance
    regex: re.Pattern[str]
    side: str  # "before": matched at the end of the text before the mention; "after": at the start after it
    confidence: float = CONF_STANCE
    # What a negation right before the cue turns this stance into (None = no stance).
    negated: Stance | None = None


_ART = r"(?:(?:the|a|an|some|more|my|this|that|about|with)\s+)*"

EN: tuple[StancePattern, ...] = (
    StancePattern(Stance.dislikes, re.compile(r"(?P<cue>\b(?:hate|hates|dislike|can'?t\s+stand|cannot\s+stand|(?:do\s+not|don'?t|dont)\s+(?:really\s+)?(?:like|care\s+(?:about|for)|enjoy)|(?:am|'m|im)\s+(?:so\s+|really\s+)?(?:tired|sick|bored)\s+(?:of|with)|gave\s+up\s+on|give\s+up\s+on|giving\s+up\s+on|quit|dropped|(?:am|'m|im)\s+done\s+with|no\s+longer\s+(?:want\s+to\s+(?:learn|study)|interested\s+in|care\s+about|like|into)|not\s+(?:really\s+)?(?:interested|into)(?:\s+in)?|(?:do\s+not|don'?t|dont)\s+(?:really\s+)?want\s+to\s+(?:learn|study|do|use|hear\s+about)(?:\s+about)?|stop(?:ped)?\s+(?:learning|studying|using)))\s+" + _ART + r"$", I_), "before"),
    StancePattern(Stance.dislikes, re.compile(r"^\s*(?P<cue>is\s+(?:so\s+|really\s+)?(?:boring|useless|pointless|a\s+waste\s+of\s+time)|sucks|bores\s+me)", I_), "after"),
    StancePattern(Stance.confused, re.compile(r"(?P<cue>\b(?:(?:do\s+not|don'?t|dont|can'?t|cannot|cant|didn'?t|did\s+not)\s+(?:really\s+|quite\s+|fully\s+|totally\s+|even\s+)?(?:get|understand|grasp|follow|see\s+how|see\s+why)|(?:am|'m|im)\s+(?:so\s+|really\s+|very\s+|a\s+bit\s+|kind\s+of\s+|totally\s+|still\s+)?(?:confused|lost|stuck)\s+(?:about|by|with|on|in)|confused\s+(?:about|by)|struggl(?:e|ing)\s+with|having\s+(?:trouble|a\s+hard\s+time|difficulty|problems)\s+with|stuck\s+on|what(?:'s|\s+is|\s+are|\s+exactly\s+is|\s+does)|how\s+(?:does|do)|explain|help\s+me\s+(?:with|understand)|no\s+idea\s+(?:what|how)(?:\s+(?:is|are))?|not\s+sure\s+(?:what|how|about)(?:\s+(?:is|are))?))\s+" + _ART + r"$", I_), "before", 0.7),
    StancePattern(Stance.confused, re.compile(r"^\s*(?P<cue>makes\s+no\s+sense|(?:doesn'?t|does\s+not|don'?t|do\s+not)\s+make\s+(?:any\s+)?sense|(?:is|are)\s+(?:so\s+|really\s+|very\s+|too\s+|kind\s+of\s+)?(?:confusing|hard|difficult|tricky|beyond\s+me)|confuses\s+me|goes\s+over\s+my\s+head|is\s+killing\s+me)", I_), "after"),
    StancePattern(Stance.knows, re.compile(r"(?P<cue>\b(?:already\s+)?(?:know|knew|learned|learnt|studied|mastered|finished|completed|took|(?:have|'ve)\s+(?:already\s+)?(?:taken|learned|learnt|studied|used|mastered|done|finished|been\s+using|worked\s+with)|used|worked\s+with|(?:am|'m|im)\s+(?:already\s+|pretty\s+|very\s+|quite\s+)?(?:familiar\s+with|good\s+at|comfortable\s+with|fluent\s+in|proficient\s+(?:in|with)|an\s+expert\s+(?:in|on))))\s+(?:how\s+to\s+use\s+)?" + _ART + r"$", I_), "before", negated=Stance.confused),
    StancePattern(Stance.interested, re.compile(r"(?P<cue>\b(?:want|wanna|would\s+like|'d\s+like|hope|hoping|plan|planning|going|gonna|trying|try|eager|excited|keen|decided|need|looking\s+forward)\s+(?:to\s+)?(?:learn|study|get\s+into|get\s+better\s+at|master|understand|explore|dig\s+into|pick\s+up|try|know\s+more\s+about|learn\s+more\s+about|start\s+(?:learning|with)|work\s+on|practi[cs]e|improve(?:\s+my)?|use|learning|studying))\s+" + _ART + r"$", I_), "before", negated=Stance.dislikes),
    StancePattern(Stance.interested, re.compile(r"(?P<cue>\b(?:(?:am|'m|im)\s+(?:really\s+|very\s+|so\s+|super\s+|quite\s+|now\s+)?(?:into|interested\s+in|curious\s+about|excited\s+about|keen\s+on|passionate\s+about|fascinated\s+by|learning|studying)|(?:really\s+)?(?:love|like|enjoy|adore)(?:\s+(?:learning|studying|using|working\s+with))?|tell\s+me\s+(?:more\s+)?about|teach\s+me))\s+" + _ART + r"$", I_), "before", negated=Stance.dislikes),
)

ZH: tuple[StancePattern, ...] = (
    StancePattern(Stance.dislikes, re.compile(r"(?P<cue>不喜欢|讨厌|不想(?:再)?(?:学|学习|了解|碰|用|看)|不再(?:学|学习|用)|放弃了?|受够了?|烦透了?)(?:了|一下)?$"), "before"),
    StancePattern(Stance.dislikes, re.compile(r"^\s*(?:已经|真的|实在|一点也|一点都|完全)?(?P<cue>不感兴趣|没兴趣|没有兴趣|不想学了?|太无聊了?|很无聊|没意思)"), "after"),
    StancePattern(Stance.confused, re.compile(r"(?P<cue>不懂|搞不懂|搞不明白|不明白|不理解|弄不懂|弄不明白|看不懂|听不懂|学不会|不太懂|不太明白|不太理解|不会用?|什么(?:是|叫)|啥是|不知道什么是|卡在|困惑于?)$"), "before", 0.7),
    StancePattern(Stance.confused, re.compile(r"^\s*(?:我|还是|真的|完全|有点|有些|一直|总是|实在|根本)*(?P<cue>不懂|不明白|不理解|看不懂|搞不懂|搞不明白|没搞懂|没弄懂|学不会|好难|太难了?|很难|难懂|是什么|是啥|怎么(?:用|学|理解)|让我(?:很)?困惑)"), "after", 0.7),
    StancePattern(Stance.knows, re.compile(r"(?P<cue>学过|学会了|会用|懂|掌握了|用过|熟悉|精通|已经会|已经学了|已经掌握了?|了解|做过)(?:了)?$"), "before"),
    StancePattern(Stance.knows, re.compile(r"^\s*(?P<cue>我(?:已经|早就)?(?:学过|会|懂|掌握了|用过|很熟悉|熟悉|精通)(?:了)?)"), "after"),
    StancePattern(Stance.interested, re.compile(r"(?P<cue>(?:想|要|打算|准备|希望|计划|开始|正在|在)(?:好好|深入)?(?:学|学习|了解|掌握|研究|入门|看看|试试)(?:一下|一些|下)?|喜欢|爱上了?|迷上了?)$"), "before", negated=Stance.dislikes),
    StancePattern(Stance.interested, re.compile(r"^\s*(?:很|非常|特别|比较|挺|有点|蛮|超)?(?P<cue>感兴趣|有兴趣|好奇)"), "after"),
)

_NEG_EN = re.compile(r"(?:n'?t|\bnot|\bnever|\bno\s+longer|\bhardly)\s+(?:really\s+|actually\s+|even\s+|yet\s+|ever\s+|want\s+to\s+|wanna\s+)?$", I_)
_NEG_ZH = re.compile(r"(?:不|没|没有|未|别|从没|从来没)$")
_HEDGE_EN = re.compile(r"\b(?:maybe|might|perhaps|probably|kind\s+of|sort\s+of|kinda|i\s+guess|i\s+think|not\s+sure\s+if|a\s+little|a\s+bit)\b", I_)
_HEDGE_ZH = re.compile(r"(?:可能|也许|或许|好像|大概|有点|一点)")
_COORD = re.compile(r"^\s*(?:,|，|、|and|or|&|as\s+well\s+as|和|跟|与|及|以及|还有|或者?)\s*(?:also\s+)?(?:the\s+)?$", I_)
_KNOW_VERBS = re.compile(r"\b(?:know|knew|understand)\b|懂|会", I_)


def _norm_quotes(s: str) -> str:
    return s.replace("\u2019", "'").replace("\u2018", "'")


def extract_stances(text: str, language: str, sentences: list[tuple[int, int]], mentions: list[ConceptMention]) -> list[StanceMention]:
    """One StanceMention per mention that carries a cue. `mentions` sorted by start."""
    patterns = ZH + EN if language == "zh" else EN + ZH
    neg = _NEG_ZH if language == "zh" else _NEG_EN
    hedge = _HEDGE_ZH if language == "zh" else _HEDGE_EN
    src = _norm_quotes(text)  # same length: spans stay valid
    out: list[StanceMention] = []
    for s_start, s_end in sentences:
        prev: tuple[ConceptMention, StanceMention] | None = None
        for m in (x for x in mentions if x.start >= s_start and x.end <= s_end):
            found = _match(text, src, m, s_start, s_end, patterns, neg, hedge)
            if found is None and prev is not None and _COORD.match(src[prev[0].end : m.start]):
                # "I want to learn Python and Django": Django shares Python's stance.
                p = prev[1]
                found = StanceMention(key=m.key, name=m.name, stance=p.stance, start=p.start, end=p.end, cue=p.cue, confidence=p.confidence)
            if found is not None:
                out.append(found)
                prev = (m, found)
            else:
                prev = None
    return out


def _match(text: str, src: str, m: ConceptMention, s_start: int, s_end: int, patterns: tuple[StancePattern, ...], neg: re.Pattern[str], hedge: re.Pattern[str]) -> StanceMention | None:
    b0 = max(s_start, m.start - 80)
    before = src[b0 : m.start]
    after = src[m.end : min(s_end, m.end + 40)]
    for pat in patterns:
        if pat.side == "before":
            hit = pat.regex.search(before)
            if hit is None:
                continue
            cs, ce = b0 + hit.start("cue"), b0 + hit.end("cue")
        else:
            hit = pat.regex.match(after)
            if hit is None:
                continue
            cs, ce = m.end + hit.start("cue"), m.end + hit.end("cue")
        stance: Stance | None = pat.stance
        conf = pat.confidence
        lead = src[max(s_start, cs - 20) : cs]
        if pat.side == "before" and (neg.search(lead) or _NEG_ZH.search(lead)):
            # A negation cancels the cue ("I don't hate X", 没学过X) unless the pattern says
            # what it becomes; "don't know X" means confusion only for knowing verbs.
            if pat.negated is None or (pat.stance is Stance.knows and not _KNOW_VERBS.search(src[cs:ce])):
                return None
            stance, conf = pat.negated, CONF_NEGATED
        if stance is None:
            return None
        context = src[s_start : m.start] if pat.side == "before" else src[s_start:ce]
        if hedge.search(context):
            conf = min(conf, CONF_HEDGED)
        return StanceMention(key=m.key, name=m.name, stance=stance, start=cs, end=ce, cue=text[cs:ce], confidence=conf)
    return None
