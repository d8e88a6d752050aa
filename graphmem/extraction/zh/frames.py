"""Chinese names delimited by the sentence around them, not by the segmenter.

jieba cuts titles and foreign names it does not know into dictionary pieces
(爱乐|之城, 被|嫌弃|的|松子|的|一生, 对马修|·|比尔德), so a rule over its tokens
finds fragments. Chat text, though, frames the names people ask about in a few
fixed ways, and the frame gives both ends of the name:

* a question of knowing or having seen: 你看过 *X* 吗 / 知道 *X* 这部电影吗 /
  听说过 *X* 这个人吗 / 对 *X* 了解吗;
* a back-pointing cue after a clause start: *X* 这部电影你看过没;
* naming: 代表作 *X* / 一部影片叫 *X* / 有个明星叫 *X*;
* transliterated names with a middle dot: 本尼迪克特·康伯巴奇, found by the
  characters Chinese uses to transcribe foreign names, so that the words
  around them (对, 过, 是哪国人) stay outside.

Every span is checked against the segmenter's tokens inside it: it must hold a
noun-like piece, must not open with a pronoun, adverb or particle, and must not
be a question word or a generic noun. Spans are candidates like any other
(zh.candidates decides by length and confidence) and are also added to the
batch's ZhLexicon, so the name is found again where no frame surrounds it.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterator, Sequence
from functools import lru_cache

from graphmem.wordlists import yaml_data

# Characters of the standard transcription of foreign personal names (Xinhua's
# table of common transliteration characters, plus frequent variants). A name
# around a middle dot extends over these and stops at anything else.
TRANSLIT = frozenset(
    "阿埃艾爱安昂敖奥澳巴芭拜班邦包保堡鲍贝本比彼毕庇宾滨波玻伯勃博布步采蔡查察柴彻楚茨达大戴黛丹当道德登邓狄迪笛"
    "底蒂丁东栋杜敦顿多朵俄厄鄂恩尔耳法凡范菲斐费芬丰佛弗福夫伏孚盖甘冈刚高戈哥歌格葛根贡古谷瓜圭果哈海亥汉翰豪"
    "浩赫黑亨洪侯胡华怀惠霍基吉姬济加佳迦嘉贾简杰捷金津晋久居君喀卡凯堪坎康考柯科可克肯孔库夸奎昆拉腊莱赖兰岚朗"
    "劳勒雷蕾黎里理力立丽利莉琳林凌留柳龙隆卢鲁陆路露伦罗洛律吕马玛麦迈曼芒梅美门蒙孟米密缪敏明摩莫墨默姆牧穆纳"
    "娜乃奈南楠内妮尼倪涅宁纽农努诺欧帕派潘庞培佩彭蓬皮平珀坡普奇齐其契恰乔切琴青琼丘秋屈萨塞赛桑瑟森沙莎山珊尚"
    "绍舍申圣施诗什史士舒斯司丝松宋苏素索塔泰坦汤唐陶特提汀廷通图托瓦娃万旺威韦维薇温文翁沃乌伍武西希锡席夏仙香"
    "肖谢辛欣休修许旭薛雅亚娅延严扬杨耶叶伊依怡因茵英尤于宇约越云赞扎泽詹章昭哲贞朱卓兹宗佐左琪妃翠芙蓓娣瑞珂歇"
    "霞岑犹徳卜雪芝梵汗白雯裘廉逊治卫尚蕊娟哲拜"
)
NAME_DOTS = "·•・‧"

_DOTTED = re.compile(f"[{''.join(sorted(TRANSLIT))}]{{1,8}}(?:[{NAME_DOTS}][{''.join(sorted(TRANSLIT))}]{{1,8}})+")

# Verbs of knowing / having seen that open a question about a name.
_KNOW = "听说过|看过了|看过|听过|读过|玩过|去过|看了|听了|知道|认识|了解过|了解|喜欢|推荐|记得"
# After these verbs a name may hold 的 (被嫌弃的松子的一生); after 知道/认识 a 的 is a description.
_SEEN = frozenset({"听说过", "看过了", "看过", "听过", "读过", "玩过", "去过", "看了", "听了"})
_BACK_CUES = (
    "这部电影|这部影片|这部片子|这部片|这部剧|这部作品|这首歌曲|这首歌|这首曲子|这张专辑|这本书|这个人|这位|"
    "这个组合|这个乐队|这支乐队|这家公司|这所学校|这个地方|这个景点|这座"
)
_QEND = "吗|么|没有|没|呢|吧|[？?]"
_NAME_CHARS = r"[^\s，。！？、,.!?；;“”\"《》【】（）()]"
_CLAUSE = r"(?:^|(?<=[，。！？、,.!?；;\s]))"

_ASK = re.compile(f"(?P<verb>{_KNOW})(?:一下)?(?P<x>{_NAME_CHARS}{{2,20}}?)(?={_BACK_CUES}|{_QEND})")
_ABOUT = re.compile(f"对(?P<x>{_NAME_CHARS}{{2,20}}?)(?=(?:有|很|比较|还|也)?(?:一些|一点|点|些)?(?:了解|熟悉|感兴趣))")
_BACK = re.compile(
    f"{_CLAUSE}(?:你|我|那|那么|对了|还有|有|嗯|觉得|我觉得|对于|对)?(?P<x>{_NAME_CHARS}{{2,20}}?)(?={_BACK_CUES})"
)
_NAMED = re.compile(
    "(?:代表作(?:品)?(?:是|有|叫|就是)?|(?:电影|影片|片子|歌曲|歌|专辑|作品|组合|乐队|公司|明星|演员|歌手|景点)叫(?:做)?)"
    f"(?P<x>{_NAME_CHARS}{{2,20}}?)(?=[，。！？、,.!?；;\\s]|你|我|他|她|吗|呢|吧|啦|呀|了|等|$)"
)

# A span never opens with these (pronouns, demonstratives, question words, adverbs, particles);
# after a back-pointing cue only pronouns and demonstratives are ruled out (被嫌弃的松子的一生).
_PRONOUN_FIRST = frozenset("我你他她它这那哪谁什怎几每某")
_BAD_FIRST = _PRONOUN_FIRST | frozenset("一些也都就还很太最更又再已正在是了的过着被把让给和与及或吗呢吧啊呀嗯哦")
_BAD_INSIDE = (
    "什么",
    "怎么",
    "哪",
    "谁",
    "多少",
    "为什么",
    "是不是",
    "有没有",
    "一下",
    "这个",
    "那个",
    "这部",
    "那部",
    "这首",
    "那首",
)
_BACK_CUE_WORDS = tuple(_BACK_CUES.split("|"))
_CLAUSE_CUT = frozenset("是我你他她它")
# Tags of a span's first token that make it a clause, not a name: adverbs, pronouns,
# prepositions, conjunctions, particles, time and locality words, numerals without digits.
_BAD_FIRST_TAGS = frozenset(
    {"d", "r", "p", "c", "uj", "ul", "uz", "ug", "uv", "ud", "y", "t", "f", "e", "o", "q", "zg"}
)
_ADJ_TAGS = frozenset({"a", "ad", "ag"})
# Without a cue a verb or adjective first means a clause (吃辣, 很好看); an adjective may open a
# title of four or more characters that ends in a noun (疯狂|原始人).
_VERB_TAGS = frozenset({"v", "vd", "vg", "vi", "vq"}) | _ADJ_TAGS
_NOUNISH = ("n", "unk", "eng", "x", "j", "l", "i", "nz", "vn", "ng", "s")
# Words stripped from the front of a span: a verb of knowing the clause start left on
# (知道二十二这部电影), the kind of thing rather than its name (电影终结者2 -> 终结者2).
_LEAD_WORDS = tuple(_KNOW.split("|")) + (
    "觉得",
    "你",
    "我",
    "的",
    "演的",
    "唱的",
    "电影",
    "影片",
    "片子",
    "歌曲",
    "专辑",
    "主演",
    "导演",
    "演员",
    "歌手",
    "组合",
    "乐队",
    "作品",
    "代表作",
    "一部",
    "一首",
    "一张",
    "一个",
    "部",
    "首",
)


def _alternation(words: Sequence[str]) -> str:
    return "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))


# The end of a topic's clause: a sentence particle at most, then punctuation or the end of the text.
_CLAUSE_END_BODY = r"(?:了|吧|呢|啊|呀|啦)?(?:[，。！？、,.!?；;~…\s]|$)"
_TOPIC_END = f"(?={_CLAUSE_END_BODY})"
_CLAUSE_END = re.compile(_CLAUSE_END_BODY)


@lru_cache(maxsize=1)
def _topic_patterns() -> tuple[re.Pattern[str], frozenset[str]]:
    data = yaml_data("zh_names.yaml")
    # Overlapping matches (a lookahead): 喜欢看三体 tries 喜欢|看三体 and 看|三体; the shortest clean object wins.
    pattern = re.compile(
        f"(?=(?P<verb>{_alternation(data['topic_verbs'])})(?:了|过)?"
        f"(?P<x>[A-Za-z][A-Za-z0-9+#. -]{{0,30}}[A-Za-z0-9+#]|{_NAME_CHARS}{{2,12}}?){_TOPIC_END})"
    )
    return pattern, frozenset(data["activity_verbs"])


@lru_cache(maxsize=1)
def _fronted_patterns() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """A topic opening its clause, then (我) adverbs and a verb of knowing or giving up (特征值总是搞不懂)."""
    data = yaml_data("zh_names.yaml")
    tail = f"(?:我|我们)?(?:{_alternation(data['topic_adverbs'])})*(?:{_alternation(data['fronted_topic_verbs'])})"
    span = re.compile(f"{_CLAUSE}(?P<x>[A-Za-z][A-Za-z0-9+#.-]{{0,30}}[A-Za-z0-9+#]|{_NAME_CHARS}{{2,8}}?)(?={tail})")
    return span, re.compile(tail)


def topic_objects(
    text: str, tokens: Sequence[tuple[int, int, str, str]], generic: frozenset[str]
) -> Iterator[tuple[int, int]]:
    """Spans of what a verb of learning, liking, knowing or disliking takes, up to the end of its clause
    (我想学|吉他。 我讨厌|数学), or of a topic opening its clause before such a verb (咖啡|我已经戒了): the speaker's
    topic even when it is an everyday word.
    The span must start and end on the segmenter's token edges and hold nouns (or, after an activity verb such as
    学 or 喜欢, one activity word: 露营, 游泳), never a pronoun, question word or generic word."""
    pattern, activity_verbs = _topic_patterns()
    fronted, _ = _fronted_patterns()
    starts = [t[0] for t in tokens]
    ends = {t[1] for t in tokens}
    best: dict[int, tuple[int, int]] = {}  # clause end -> the shortest clean span ending there
    for m in (*pattern.finditer(text), *fronted.finditer(text)):
        s, e = m.start("x"), m.end("x")
        x = text[s:e]
        if e not in ends or x in generic or x[0] in _BAD_FIRST or any(b in x for b in _BAD_INSIDE):
            continue
        k = bisect_right(starts, s) - 1
        if k < 0:
            continue
        inside = [t for t in tokens[k : bisect_left(starts, e)] if t[1] > s]
        if not inside or any(t[2] in generic for t in inside):
            continue
        if inside[0][0] != s and inside[0][3] != "unk":
            continue  # starts inside a dictionary word (数|学习): not after the verb
        verb = m.groupdict().get("verb")
        lone_activity = len(inside) == 1 and inside[0][3] in ("v", "vn") and verb in activity_verbs
        if not lone_activity and not all(t[3].startswith(_NOUNISH) or t[3] in ("nr", "ns", "nt") for t in inside):
            continue
        if len(x) < 2:
            continue
        if e not in best or s > best[e][0]:
            best[e] = (s, e)
    yield from best.values()


@lru_cache(maxsize=1)
def _after_verb() -> re.Pattern[str]:
    return re.compile(f"(?:{_alternation(yaml_data('zh_names.yaml')['topic_verbs'])})(?:了|过)?$")


def after_topic_verb(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` stands where :func:`topic_objects` looks: right after a verb of learning,
    liking, knowing or disliking, running to the end of its clause (我想学|吉他|。), or opening its clause before
    one (特征值|总是搞不懂)."""
    if _CLAUSE_END.match(text, end) and _after_verb().search(text[max(0, start - 8) : start]):
        return True
    opens_clause = start == 0 or text[start - 1] in "，。！？、,.!?；;\n 　"
    return opens_clause and bool(_fronted_patterns()[1].match(text, end))


def dotted_names(text: str, tokens: Sequence[tuple[int, int, str, str]]) -> Iterator[tuple[int, int]]:
    """Spans of middle-dot names written in transliteration characters.

    A span that starts inside a dictionary word of the segmenter starts after it
    instead (知道|梅尔文·勒罗伊: 道 transcribes too, but 知道 is a word); inside an
    out-of-dictionary token (对马修) the characters decide.
    """
    starts = [t[0] for t in tokens]
    for m in _DOTTED.finditer(text):
        s, e = m.start(), m.end()
        k = bisect_right(starts, s) - 1  # the token holding s (tokens are sorted and do not overlap)
        if k >= 0:
            ts, te, _, tag = tokens[k]
            if ts < s < te and tag not in ("unk", "x"):
                s = te
        if e - s >= 3 and text[s] not in NAME_DOTS:
            yield s, e


def frame_names(
    text: str, tokens: Sequence[tuple[int, int, str, str]], generic: frozenset[str]
) -> Iterator[tuple[int, int]]:
    """Spans of names delimited by a question, back-pointing or naming frame.

    ``tokens``: the segmenter's (start, end, word, tag) for ``text``; ``generic``:
    words that are never a name on their own.
    """
    seen: set[tuple[int, int]] = set()
    starts = [t[0] for t in tokens]
    for pattern in (_ASK, _ABOUT, _BACK, _NAMED):
        for m in pattern.finditer(text):
            s, e = m.start("x"), m.end("x")
            verb = m.groupdict().get("verb")
            # A back-pointing cue (这部电影, 这个人) or a naming word says a name is there:
            # the span is trusted more than one closed only by 吗.
            cued = pattern in (_BACK, _NAMED) or text.startswith(_BACK_CUE_WORDS, e)
            if pattern is _BACK:
                # From a clause start the span may hold its own subject: 肯定是他导演的|人工智能.
                cut = max((s + i + 1 for i, ch in enumerate(text[s:e]) if ch in _CLAUSE_CUT), default=s)
                if e - cut >= 2:
                    s = cut
            elif not cued and any(ch in _PRONOUN_FIRST for ch in text[s:e]):
                continue  # 对于此片主演卡西·阿弗莱克你了解吗: a clause, not a name
            span = _clean(text, s, e, tokens, starts, generic, allow_de=cued or verb in _SEEN, cued=cued)
            if span is not None and span not in seen:
                seen.add(span)
                yield span


def _clean(
    text: str,
    s: int,
    e: int,
    tokens: Sequence[tuple[int, int, str, str]],
    starts: Sequence[int],
    generic: frozenset[str],
    allow_de: bool,
    cued: bool,
) -> tuple[int, int] | None:
    stripped = True
    while stripped:
        stripped = False
        for w in _LEAD_WORDS:
            if text.startswith(w, s) and e - s - len(w) >= 2:
                s += len(w)
                stripped = True
                break
    x = text[s:e]
    if len(x) < 2 or x in generic or x[0] in (_PRONOUN_FIRST if cued else _BAD_FIRST):
        return None
    if any(b in x for b in _BAD_INSIDE) or (not allow_de and "的" in x):
        return None
    # Tokens overlapping [s, e): by bisection, so a long turn with many frames stays linear.
    inside = list(tokens[max(0, bisect_right(starts, s) - 1) : bisect_left(starts, e)])
    inside = [t for t in inside if t[1] > s]
    if not inside:
        return None
    first_tag = inside[0][3] if inside[0][0] == s else ""
    if (
        first_tag in _BAD_FIRST_TAGS
        and not (cued and x[0] == "被")
        or not cued
        and first_tag in _VERB_TAGS
        and not (first_tag in _ADJ_TAGS and len(x) >= 4 and inside[-1][3].startswith("n"))
    ):
        return None  # 很好看, 吃辣: a clause, not a name (a cued 被 opens passive titles: 被嫌弃的…)
    if "的" in x and inside[-1][2] in generic and inside[-1][1] == e and len(inside) > 1:
        return None  # 北京的地方, 好看的电影: a description ending in a generic noun
    if (
        not cued
        and not any(c.isdigit() or c.isascii() and c.isalpha() for c in x)
        and not any(t[3].startswith(_NOUNISH) for t in inside)
    ):
        return None  # 很多, 不错: no noun-like piece
    return s, e


__all__ = ["TRANSLIT", "NAME_DOTS", "dotted_names", "frame_names", "topic_objects", "after_topic_verb"]
