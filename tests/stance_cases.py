"""Stance test sentences WRITTEN BY HAND for these tests (not taken from any data set, not the issue's
examples): first-person learner statements about one catalog concept, in the style of the held-out
check (knows / confused / interested / dislikes / none), covering negation, past vs now, other
people's tastes, "never touched X", "don't know X yet but want to", exam results and jobs as
evidence, hedges and idioms. Each case: (text, concept name as in the catalog, expected stance or None,
phenomenon)."""

from __future__ import annotations

from graphmem.models import Catalog, CatalogConcept, Stance

I, C, K, D, N = Stance.interested, Stance.confused, Stance.knows, Stance.dislikes, None

EN_CONCEPTS = ["Python", "Rust", "Docker", "Kubernetes", "SQL", "recursion", "linear algebra", "statistics", "calculus",
               "React", "pandas", "Git", "machine learning", "regular expressions", "TypeScript", "Haskell", "Java",
               "pointers", "Bayes' theorem", "CSS", "organic chemistry", "Spanish", "jazz", "sci-fi"]
ZH_CONCEPTS = ["线性代数", "微积分", "概率论", "Python", "SQL", "机器学习", "数据结构", "递归", "英语语法", "物理", "化学",
               "Java", "Git", "Docker", "指针", "日语", "钢琴", "编译原理", "高等数学", "爵士乐", "科幻片", "C语言"]

CATALOG = Catalog(concepts=[CatalogConcept(name=n) for n in dict.fromkeys(EN_CONCEPTS + ZH_CONCEPTS)])

EN: list[tuple[str, str, Stance | None, str]] = [
    ("Recursion finally clicked for me last week.", "recursion", K, "idiom"),
    ("I can't wrap my head around pointers.", "pointers", C, "idiom"),
    ("Regular expressions keep tripping me up.", "regular expressions", C, "idiom"),
    ("I've been writing Java professionally for six years.", "Java", K, "job"),
    ("I work as a Python developer.", "Python", K, "job"),
    ("I got an A in calculus last semester.", "calculus", K, "exam"),
    ("I passed the statistics exam with full marks.", "statistics", K, "exam"),
    ("I can't wait to start learning Rust.", "Rust", I, "wanting"),
    ("I'd love to get into machine learning this year.", "machine learning", I, "wanting"),
    ("I haven't learned TypeScript yet, but I really want to.", "TypeScript", I, "not yet but want"),
    ("I never touched Docker.", "Docker", N, "never touched"),
    ("I have never used Kubernetes.", "Kubernetes", N, "never touched"),
    ("I don't know Haskell.", "Haskell", N, "not known"),
    ("My sister adores Haskell.", "Haskell", N, "someone else"),
    ("My teacher says SQL is easy, but he loves everything.", "SQL", N, "someone else"),
    ("My roommate is a React developer.", "React", N, "someone else"),
    ("Git used to scare me, but now I use it every day.", "Git", K, "past vs now"),
    ("I used to love jazz.", "jazz", N, "past only"),
    ("I'm not confused about Bayes' theorem anymore.", "Bayes' theorem", K, "negated struggle"),
    ("CSS is a total nightmare for me.", "CSS", C, "idiom"),
    ("Linear algebra goes right over my head.", "linear algebra", C, "idiom"),
    ("Honestly, organic chemistry isn't my cup of tea.", "organic chemistry", D, "idiom"),
    ("I'm not a fan of Java.", "Java", D, "negated like"),
    ("I don't really enjoy statistics.", "statistics", D, "negated like"),
    ("I'm sick of pandas and its weird indexing.", "pandas", D, "disliking"),
    ("Sci-fi bores me.", "sci-fi", D, "disliking"),
    ("Calculus was too tedious for me.", "calculus", D, "disliking"),
    ("What exactly is recursion?", "recursion", C, "question showing being lost"),
    ("Is Docker worth learning?", "Docker", N, "neutral question"),
    ("Maybe I'll try Rust someday.", "Rust", I, "hedge"),
    ("I think I kind of understand SQL now.", "SQL", K, "hedge"),
    ("I'm really struggling with calculus.", "calculus", C, "struggling"),
    ("I'm pretty comfortable with Git.", "Git", K, "knowing"),
    ("Spanish is second nature to me, I grew up with it.", "Spanish", K, "idiom"),
    ("I'm totally lost on pointers.", "pointers", C, "idiom"),
    ("I don't want to learn Java anymore.", "Java", D, "no longer wants"),
    ("I gave up on Haskell after a week.", "Haskell", D, "gave up"),
    ("React is on my list of things to learn.", "React", I, "idiom"),
    ("Python is what I use at work every day.", "Python", K, "job"),
    ("I'm curious about machine learning.", "machine learning", I, "interest"),
]

ZH: list[tuple[str, str, Stance | None, str]] = [
    ("我对线性代数一直很头疼。", "线性代数", C, "idiom"),
    ("微积分我完全搞不懂。", "微积分", C, "struggling"),
    ("概率论我学得一头雾水。", "概率论", C, "idiom"),
    ("我在公司当Python工程师。", "Python", K, "job"),
    ("高等数学期末我考了95分。", "高等数学", K, "exam"),
    ("我C语言考试拿了满分。", "C语言", K, "exam"),
    ("我很想学机器学习。", "机器学习", I, "wanting"),
    ("我还不会日语，但是很想学。", "日语", I, "not yet but want"),
    ("我从来没碰过Docker。", "Docker", N, "never touched"),
    ("我没学过编译原理。", "编译原理", N, "never touched"),
    ("我不会Java。", "Java", N, "not known"),
    ("我男朋友特别喜欢科幻片。", "科幻片", N, "someone else"),
    ("我妈妈弹钢琴弹得很好。", "钢琴", N, "someone else"),
    ("老师说数据结构很重要。", "数据结构", N, "someone else"),
    ("以前我看不懂递归，现在终于明白了。", "递归", K, "past vs now"),
    ("我以前很喜欢爵士乐。", "爵士乐", N, "past only"),
    ("我对指针已经不困惑了。", "指针", K, "negated struggle"),
    ("Git对我来说小菜一碟。", "Git", K, "idiom"),
    ("英语语法我早就掌握了。", "英语语法", K, "knowing"),
    ("我对化学一点兴趣都没有。", "化学", D, "disliking"),
    ("物理太枯燥了。", "物理", D, "disliking"),
    ("我不喜欢SQL。", "SQL", D, "negated like"),
    ("科幻片不是我的菜。", "科幻片", D, "idiom"),
    ("我已经不想学钢琴了。", "钢琴", D, "no longer wants"),
    ("什么是递归？", "递归", C, "question showing being lost"),
    ("数据结构有什么用？", "数据结构", N, "neutral question"),
    ("我可能会去学一下Docker。", "Docker", I, "hedge"),
    ("我好像有点懂概率论了。", "概率论", K, "hedge"),
    ("我对爵士乐特别着迷。", "爵士乐", I, "interest"),
    ("我熟悉Python。", "Python", K, "knowing"),
    ("我物理考了全班第一。", "物理", K, "exam"),
    ("我一直学不会微积分。", "微积分", C, "struggling"),
    ("我打算下个月开始学C语言。", "C语言", I, "wanting"),
    ("日语我学过三年。", "日语", K, "knowing"),
    ("机器学习对我来说太难了。", "机器学习", C, "struggling"),
    ("我放弃了Java。", "Java", D, "gave up"),
]
