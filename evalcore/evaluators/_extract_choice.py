"""Option-letter answer extraction (the ``"letter"`` answer kind, MMLU's): declared letters,
strict shapes, then (flexible) an option's text, the stated conclusion, the first letter that can
be an answer; notation and negations never count.

The module reads in two parts: the letters a reply mentions (where a letter is an answer-shaped
mention and where it is notation, a label, a negation, the English article or part of a list of
the options, ``A) Incorrect ...``, and the verdict a line gives an option), then the declared
answers and the strict and flexible shapes read from these mentions.

See :mod:`._exact_match` for the rules in order; shared parts are in :mod:`._extract_common`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from evalcore.datasets import CHOICE_LETTERS
from evalcore.evaluators._extract_common import (
    _HEDGED,
    _MAX_VALUE,
    _NONE,
    Extraction,
    _boxed_spans,
    _Declared,
    _field_declarations,
    _hypothetical,
    _line_start,
    _readable,
    _resolve,
    retraction_re,
)

# === the letters a reply mentions =============================================================

# --- the answer letters of the question being read --------------------------------------------
# Four options (A-D) unless the item has more (up to ten, A-J): every pattern below is written
# for A-D and compiled for the question's range when it has more options, so a four-option
# question is read exactly as before and an "E" counts only where the question has an option E.
_LAST: ContextVar[str] = ContextVar("evalcore_last_answer_letter", default="D")


class _Ranged:
    """A regex written with the classes ``A-D`` / ``a-d`` whose letters follow the question's
    options (``A-E`` ... ``A-J``); attribute access goes to the pattern compiled for the range."""

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern, self.flags = pattern, flags
        self._compiled: dict[str, re.Pattern[str]] = {}

    def get(self) -> re.Pattern[str]:
        """The pattern for the current range of letters."""
        last = _LAST.get()
        compiled = self._compiled.get(last)
        if compiled is None:
            src = self.pattern.replace("A-D", f"A-{last}").replace("a-d", f"a-{last.lower()}")
            compiled = self._compiled[last] = re.compile(src, self.flags)
        return compiled

    def __getattr__(self, name: str) -> Any:
        return getattr(self.get(), name)


def last_letter(choices: Sequence[Any] | None) -> str:
    """The last answer letter of a question with these options: D for four or fewer (or when
    unknown), else the letter of the last option (at most J)."""
    n = len(choices) if choices else 4
    return CHOICE_LETTERS[max(4, min(n, len(CHOICE_LETTERS))) - 1]


@contextmanager
def answer_letters(choices: Sequence[Any] | None) -> Iterator[str]:
    """Read the enclosed reply with the letters of these options (see :func:`last_letter`)."""
    token = _LAST.set(last_letter(choices))
    try:
        yield _LAST.get()
    finally:
        _LAST.reset(token)


# "I think", "I would pick": the pronoun, not option I of a question with nine or more options
_I_PRONOUN = re.compile(
    r"[ \t]+(?:think|believe|guess|would|will|am|choose|chose|pick|picked|select|selected|go|went|feel|suspect"
    r"|say|can|could|should|must|have|had|do|did|need|know|see|agree|prefer|lean|hope|recall|remember|want"
    r"|mean|meant|reckon|figure|conclude|concluded|found|get|got)\b"
)


def _word_letter(letter: str, after: str) -> bool:
    """Whether "A" (the article) or "I" (the pronoun: "I think ...") is a word, not a letter."""
    return (letter == "A" and _article(after)) or (letter == "I" and bool(_I_PRONOUN.match(after)))


_LETTER_END = r"(?![A-Za-z0-9+#'’-])"
# "A 2 kg object", "A 3-year-old": the article before a counted noun
_COUNTED_NOUN = re.compile(r"\s[\d.,/]+[ \t-]*[a-z]")
# words after which a leading "A" is a letter, not the English article ("A is correct")
_A_NOT_ARTICLE = re.compile(
    r"\s(?:is|was|seems|would|should|could|must|looks|appears|fits|matches|and|or|because|since|it)\b"
)


def _article(after: str) -> bool:
    """Whether a letter "A" followed by ``after`` is the English article ("A cell membrane"):
    a lower-case word follows, and not one that makes it a letter ("A is correct")."""
    return after[:1].isspace() and after[1:2].islower() and not _A_NOT_ARTICLE.match(after)


_MENTION_RE = _Ranged(
    r"(?<![A-Za-z0-9'’_\\-])(?:(?P<letter>[A-D])" + _LETTER_END + r"|\((?P<lower>[a-d])\)|(?P<lower2>[a-d])\))"
)
# math and code: letters there are notation ("Since $A$ and $B$ are similar")
_MATH_RE = re.compile(
    r"\$\$.*?\$\$|\$(?=[^\s\d])[^$\n]{1,200}?(?<=\S)\$(?!\d)|\\\(.*?\\\)|\\\[.*?\\\]|`[^`\n]+`|```.*?(?:```|\Z)",
    re.S,
)
_OPERATOR = "=<>^_∩∪×·→←↔⇒≠≤≥∈∉⊂⊆+÷√∑∏'′"
# a letter right after a number or a degree sign is a unit: "2 A", "6 C", "100 °C"
_NOTATION_BEFORE = re.compile(
    r"[A-Za-z0-9]\Z|["
    + re.escape(_OPERATOR)
    + r"][ \t]*\Z|(?<!\*)\*[ \t]*\Z|(?<![\w.])\d+(?:[.,]\d+)?[ \t]*°?[ \t]*\Z|°[ \t]*\Z"
)
# ... or names what follows it: "B cells", "T lymphocytes", "C major"
_NOTATION_AFTER = re.compile(
    r"\s*[" + re.escape(_OPERATOR) + r"]|\s*\*(?!\*)|[ \t]+(?:cells?|lymphocytes?|antigens?|antibod(?:y|ies)"
    r"|chains?|terminus|termini|horizons?|major|minor|sharp|flat)\b"
)
_PREV_WORD = re.compile(r"([A-Za-z][A-Za-z'’.:-]*)[ \t]*\Z")
# what may stand before a parenthesised answer letter; after any other word "(B)" labels a
# quantity ("magnetic field strength (B)", "resistors (R) and capacitors (C)")
_PAREN_OK_BEFORE = frozenset(
    "option options choice choices answer answers letter is are be was pick picks choose chose select "
    "selected with and or between both either neither namely therefore thus so hence correct final "
    "best right to go going i'd i'll would is: e.g i.e match matches matching say".split()
)
# nouns after which a bare capital letter is a name, not an answer ("vitamin C", "matrix A")
_NOTATION_NOUNS = frozenset(
    "vitamin vitamins hepatitis matrix matrices set sets point points vertex vertices node nodes gene genes "
    "type types class grade plan part parts group groups person company firm country countries player "
    "players city species population allele alleles strain site region line lines angle triangle segment "
    "vector event events variable factor compound substance element object particle charge block box ball "
    "car train team project patient subject sample samples population firm nation state states island "
    "planet star galaxy tube cell cells region zone phase stage step scenario case cases figure table "
    "appendix chapter section exhibit column row protein enzyme receptor drug treatment product brand "
    "model models store shop market manager employee worker student students candidate party parties".split()
)
_NEGATED_BEFORE = re.compile(
    r"\b(?:not|n't|never|rather\s+than|instead\s+of|unlike|except|other\s+than|than|eliminat\w*|rule\s+out"
    r"|ruled\s+out|rules\s+out|exclud\w*|reject\w*|nor|neither|against|discard\w*)"
    r"[\s,]*(?:\*\*|__)?\s*(?:the\s+)?(?:option\s+|choice\s+|answer\s+|letter\s+)?(?:\*\*)?[\(\[]?\Z",
    re.IGNORECASE,
)
_NEGATED_AFTER = re.compile(
    r"^[\)\]]?(?:\*\*)?[^.;\n]{0,40}?\b(?:is|are|was|seems|appears|looks|can\s+be|must\s+be)\s+(?:also\s+|clearly\s+|therefore\s+)?"
    r"(?:not\b|incorrect|wrong|false|invalid|irrelevant|unrelated|unlikely|eliminated|ruled\s+out|a\s+distractor|out\b)"
    r"|^[\)\]]?(?:\*\*)?\s*(?:isn't|doesn't|does\s+not|cannot|can't|fails|is\s+a\s+trap)\b",
    re.IGNORECASE,
)
_CONCLUSION_AFTER = re.compile(
    r"^[\)\]]?(?:\*\*)?[^.;\n]{0,25}?\b(?:is|seems|appears|looks|must\s+be|would\s+be)\s+(?:to\s+be\s+)?(?:the\s+)?"
    r"(?:most\s+|only\s+|best\s+|single\s+)?(?:correct|right|best|true|accurate|appropriate|likely|answer|valid|plausible)"
    # "B fits best.", "Ribosome — B it is."
    r"|^[\)\]]?(?:\*\*)?[ \t]*(?:fits|matches|it\s+is|wins)\b",
    re.IGNORECASE,
)
_CONCLUSION_BEFORE = re.compile(
    r"\b(?:(?:so|therefore|thus|hence)(?:[\s,]+(?:it'?s|it\s+is|(?:it|this|that)\s+(?:must|has\s+to|should|would|is\s+to)\s+be))?"
    r"|choose|pick|select|go\s+with|going\s+with|conclude|conclusion|leaves|leaving"
    r"|matches|matching|corresponds\s+to|(?:i'?d|i\s+would|i'?ll|i\s+will|i'?m\s+going\s+to)\s+(?:say|answer)"
    r"|(?:wait|actually)(?:[\s,]+no)?"  # "My first instinct is A... actually, no: B."
    r"|(?:wait|actually|no)[^.;\n]{0,30}?\b(?:it'?s|it\s+is|it\s+must\s+be))"
    r"[\s,:]*(?:is\s+)?(?:the\s+)?(?:option\s+|choice\s+|answer\s+)?(?:\*\*)?[\(\[]?\Z",
    re.IGNORECASE,
)
# a verdict in a table row: "| C | correct |", "| A | ✗ |"
_TABLE_YES = re.compile(
    r"^[\)\]]?(?:\*\*)?\s*\|[^|\n]*\|?\s*(?:\*\*)?\s*(?:✓|✔|✅|correct|right|true|yes)(?!\w)", re.IGNORECASE
)
_TABLE_NO = re.compile(
    r"^[\)\]]?(?:\*\*)?\s*\|[^|\n]*\|?\s*(?:\*\*)?\s*(?:✗|✘|❌|incorrect|wrong|false|no)(?!\w)", re.IGNORECASE
)


# the verdict on a line that opens with an option ("B) Ribosome - correct", "A. ... ✗")
_VERDICT_NO = re.compile(
    r"\b(?:incorrect|wrong|false|not\s+(?:correct|right|true|the\s+answer)|eliminated?|ruled\s+out|irrelevant)\b|[✗✘❌]",
    re.IGNORECASE,
)
_VERDICT_YES = re.compile(r"\b(?:correct|right|true|best\s+answer|the\s+answer)\b|[✓✔✅]", re.IGNORECASE)
# "A: No – energy.", "B) Ribosome – yes": a yes/no right after the label, a dash or a colon
_VERDICT_YES_NO = re.compile(
    r"(?:^[\s).:*_]*|[–—:][ \t]*|[ \t]-[ \t]*)(?:\*\*)?(?P<v>yes|no)\b(?![\w'’-])", re.IGNORECASE
)


def _line_verdict(text: str, start: int, end: int) -> bool | None:
    """For a letter opening its line (a list of options): ``False`` when the rest of the line
    rejects it, ``True`` when it accepts it, ``None`` otherwise (or when not opening a line)."""
    line_start = _line_start(text, start)
    if text[line_start:start].strip(" \t*-#>|_") or text[end : end + 1] not in (")", ".", ":", " ", "-", "—", "*"):
        return None
    line_end = text.find("\n", end, end + _MAX_VALUE)
    rest = text[end : line_end if line_end >= 0 else end + _MAX_VALUE]
    yes_no = _VERDICT_YES_NO.search(rest)
    if _VERDICT_NO.search(rest) or (yes_no and yes_no.group("v").lower() == "no"):
        return False
    return True if _VERDICT_YES.search(rest) or yes_no else None


_MAX_MENTIONS = 300


def _mask(text: str) -> str:
    """``text`` with math and code replaced by spaces (positions kept)."""
    return _MATH_RE.sub(lambda m: " " * len(m.group(0)), text)


@dataclass(frozen=True)
class _Mention:
    start: int
    end: int  # after the letter (and its closing parenthesis when there is one)
    letter: str
    paren: bool
    named: bool = False  # "(A)" right after option A's text ("the mitochondrion (A)")


# an option letter opening a line: "A) ...", "**B.** ...", "(C) ...", "D: ..."
_LINE_LABEL_RE = _Ranged(r"^[ \t>*_-]*(?:\((?P<p>[A-D])\)|(?P<l>[A-D])[.):](?!\d))", re.MULTILINE)
_INLINE_LABEL_RE = _Ranged(r"\((?P<l>[A-D])\)[ \t]*(?:(?:\*\*|__)[ \t]*)?[^\W\d_]")


def _enumeration_labels(text: str) -> list[tuple[int, int, str]]:
    """``(start, end, letter)`` of option labels in an enumeration of the options: successive
    letters (A, B, C ...) each opening a line ("A) Mitochondria\nB) Ribosome"), or each
    parenthesised before the option's text in running prose ("(A) produces ATP, (B) ...").
    A reply that goes through the options this way answers with none of them by that alone."""
    out: list[tuple[int, int, str]] = []
    masked = _mask(text)
    for pattern in (_LINE_LABEL_RE, _INLINE_LABEL_RE):
        run: list[tuple[int, int, str]] = []
        for m in pattern.finditer(masked):
            letter = m.group("l") or m.group("p")
            start = m.start("l") if m.group("l") else m.start("p")
            item = (start, start + 1, letter)
            if run and ord(letter) == ord(run[-1][2]) + 1:
                run.append(item)
                continue
            if len(run) >= 2:
                out.extend(run)
            run = [item]
        if len(run) >= 2:
            out.extend(run)
    return sorted(set(out))


def _enumerated_lines(text: str, labels: list[tuple[int, int, str]]) -> str:
    """``text`` with the lines that open with an enumeration label blanked (positions kept):
    restated options are not the reply's choice."""
    chars = list(text)
    for start, _end, _letter in labels:
        line_start = _line_start(text, start)
        if text[line_start:start].strip(" \t>*_-(#"):
            continue  # an inline label
        line_end = text.find("\n", start)
        for i in range(line_start, line_end if line_end >= 0 else len(text)):
            chars[i] = " "
    return "".join(chars)


def _letter_mentions(text: str, choices: Sequence[str] | None) -> list[_Mention]:
    """Letters A–D (A–J for a question with more options) that can be an answer: not in math or
    code, not the article "A" (nor the pronoun "I"), not notation ("P(A)", "A = 5", "vitamin C"),
    not the label of a quantity ("strength (B)") and not negated ("not (C)", "rather than B",
    "A is wrong")."""
    masked = _mask(text)
    out = []
    named_letters: set[str] = set()
    found = list(_MENTION_RE.finditer(masked))
    if len(found) > 2 * _MAX_MENTIONS:  # a page of letters: its first and last mentions decide
        found = found[:_MAX_MENTIONS] + found[-_MAX_MENTIONS:]
    for m in found:
        letter = m.group("letter") or (m.group("lower") or m.group("lower2")).upper()
        s, e = m.start(), m.end()
        paren = m.group("lower") is not None or (s > 0 and masked[s - 1] == "(" and masked[e : e + 1] == ")")
        if m.group("letter") is not None and paren:
            s, e = s - 1, e + 1
        before, after = masked[max(0, s - 60) : s], masked[e : e + 80]
        if (
            m.group("letter") == "A"
            and not paren
            and (_article(after) or (_COUNTED_NOUN.match(after) and not _A_NOT_ARTICLE.match(after)))
        ):
            continue  # the English article ("A cell is ...", "A 2 kg object ...")
        if m.group("letter") == "I" and not paren and _I_PRONOUN.match(after):
            continue  # the pronoun ("I think ..."), read as a letter only with options to I
        if _NOTATION_BEFORE.search(before) or _NOTATION_AFTER.match(after):
            continue  # notation: "P(A)", "A = 5", "x + B"
        word = _PREV_WORD.search(before)
        prev = word.group(1).lower() if word else ""
        named = False
        if paren and prev and prev not in _PAREN_OK_BEFORE:
            if _names_option_loosely(prev, letter, choices):
                named_letters.add(letter)  # "lysosomes (D)": names option D
            if not _names_option(before, letter, choices):
                continue  # "magnetic field strength (B)": a label, not an answer
            named = True
        if not paren and prev in _NOTATION_NOUNS:
            continue  # "vitamin C", "matrix A"
        if (
            _NEGATED_BEFORE.search(before)
            or _NEGATED_AFTER.match(after)
            or _TABLE_NO.match(after)
            or (_line_verdict(masked, s, e) is False)
        ):
            continue  # "not (C)", "rather than B", "A is wrong"
        if _hypothetical(masked, s):
            continue  # "It's tempting to say the answer is A"
        out.append(_Mention(s, e, letter, paren, named))
    if len(named_letters) > 1:
        # "Mitochondria (A) are for energy and lysosomes (D) for digestion": the reply names the
        # options it goes through; naming one is not choosing it
        out = [m for m in out if not m.named]
    return out


def _names_option_loosely(word: str, letter: str, choices: Sequence[str] | None) -> bool:
    """Whether ``word`` is a word of option ``letter``'s text, give or take an ending
    ("lysosomes" for "Lysosome", "Golgi" for "Golgi apparatus")."""
    if not choices or CHOICE_LETTERS.index(letter) >= len(choices) or len(word) < 4:
        return False
    for w in re.findall(r"[^\W\d_]{4,}", str(choices[CHOICE_LETTERS.index(letter)]).lower()):
        if len(os.path.commonprefix([w, word])) >= min(len(w), len(word), 5):
            return True
    return False


def _names_option(before: str, letter: str, choices: Sequence[str] | None) -> bool:
    """Whether the text before "(X)" ends with option X's text ("the mitochondrion (A)")."""
    if not choices or CHOICE_LETTERS.index(letter) >= len(choices):
        return False
    option = _norm_text(str(choices[CHOICE_LETTERS.index(letter)]))
    return bool(option) and _norm_text(before).endswith(option)


def _norm_text(s: str) -> str:
    s = s.lower().replace("**", "")
    s = re.sub(r"[\s]+", " ", s)
    return s.strip(" .,:;!?\"'`*()[]")


# === declared letters, strict shapes, the flexible reading ===================================

# an answer letter: upper case standing alone, or lower case only where it cannot be a word
# ("answer: c", "answer is (c)"), so "the answer is a prime number" is not "A"
_LETTER = r"(?P<letter>(?-i:[A-D])" + _LETTER_END + r"|(?-i:[a-d])(?=\s*(?:$|[.,;:)\]\n*])))"
_MARKUP = r"(?:\*\*|__|\$|\\\(|\\text(?:bf)?\{|\\mathbf\{|\s)*"
_CHOICE_ANSWER_IS = [
    _Ranged(
        # "answer" with any separator; "option"/"choice" only qualified ("correct choice: B") or
        # with a verb ("the option is B"), so "each option:\nA) ..." is no declaration
        r"(?<![\w-])(?:(?:correct\s+|final\s+|best\s+|right\s+)?answers?"
        r"|(?:correct|final|best|right|my)\s+(?:option|choice)|(?:option|choice)(?=\s*(?:\*\*)?\s*[a-z]))"
        r"\s*(?:\*\*)?\s*"
        r"(?:is|are|would\s+be|will\s+be|should\s+be|must\s+be|has\s+to\s+be|=|:|-)\s*"
        r"(?:[:=]\s*)?(?:(?:definitely|clearly|therefore|thus|then|indeed|probably|likely|most\s+likely|simply)\s+)?"
        r"(?:either\s+|both\s+)?(?:option\s+|choice\s+|letter\s+)?" + _MARKUP + r"[\(\[]?\s*" + _LETTER,
        re.IGNORECASE,
    ),
    _Ranged(
        r"(?<![\w-])(?:answer\s*(?:is\s*)?|(?:option|choice)\s+is\s*)[\(\[]\s*(?P<letter>[a-dA-D])\s*[\)\]]",
        re.IGNORECASE,
    ),
    # "Answer: B" opening a line; also under a heading ("### Final Answer⏎⏎B")
    _Ranged(
        r"(?:^|\n)[ \t]*(?:#{1,6}[ \t]*)?(?:\*\*)?(?:final\s+)?answer(?:\*\*)?\s*[:=]?\s*(?:\*\*)?\s*[\(\[]?" + _LETTER,
        re.IGNORECASE,
    ),
]
# a strongly declared value: the letter opening it ("C", "(C) higher accuracy", "Option C")
_VALUE_LETTER = _Ranged(
    r"^[\s*_`\"'$]*(?:\\(?:text|textbf|mathbf|mathrm)\{)?\s*(?:(?:option|choice|letter|answer)\s*[:#]?\s*)?"
    r"[\(\[]?\s*(?:\*\*)?(?P<letter>(?-i:[A-D])" + _LETTER_END + r"|(?-i:[a-d])(?=\s*(?:$|[.,;:)\]}*])))",
    re.IGNORECASE,
)
_FINAL_LABEL_CHOICE = re.compile(
    r"(?:^|\n)[ \t]*(?:[#>*_-][ \t#*_]*)?final\s+answer(?:\*\*)?\s*:[ \t]*(?:\*\*)?[ \t]*(?P<val>[^\n]*)", re.IGNORECASE
)
# "B or C", "B/C", "B and C", "B, C": a second letter offered right after the first is a hedge.
_HEDGE_AFTER = _Ranged(
    r"\s*[\)\]]?\s*(?:\*\*)?\s*(?:/|&|,|\bor\b|\band\b)\s*(?:option\s+|choice\s+)?(?:\*\*)?[\(\[]?\s*"
    r"(?P<other>(?-i:[A-D]))(?![A-Za-z0-9])",
    re.IGNORECASE,
)
# "(C) higher accuracy and (B) faster response": another answer-shaped letter later in the
# same sentence, after "and"/"or", before any word that turns it into reasoning ("because")
_HEDGE_STOP = re.compile(
    r"\b(?:because|since|as|not|unlike|rather|while|whereas|but|than|instead|which|that|eliminat\w*"
    r"|incorrect|wrong|false|except|over|vs|versus)\b|[.;:!?\n]",
    re.IGNORECASE,
)
_HEDGE_LATER = _Ranged(
    r"(?:\band\b|\bor\b|/|&|,)\s*(?:\*\*|__)?\s*(?:option\s+|choice\s+)?(?:\*\*)?"
    r"(?:\((?P<o1>[A-D])\)|(?<=\*\*)(?P<o2>[A-D])(?![A-Za-z0-9])|(?<=option )(?P<o3>[A-D])(?![A-Za-z0-9]))",
    re.IGNORECASE,
)


# "..., and option A (London) is the capital of the UK": the other letter opens a clause of its
# own; it is a second answer only when that clause accepts it ("and A is also correct")
_OWN_CLAUSE = re.compile(
    r"[\)\]]?(?:\*\*|__)?[ \t]*(?:\([^()\n]{1,40}\)[ \t]*)?(?:(?:\*\*|__)[ \t]*)?"
    r"(?:is|are|was|were|seems?|looks?|appears?|refers?|describes?|names?|has|have|makes?|does|do|only|just"
    r"|can|could|would|might|may|will)\b(?P<rest>[^.;!?\n]*)",
    re.IGNORECASE,
)
_CLAUSE_ACCEPTS = re.compile(
    r"\b(?:also|too|equally|as\s+well|correct|right|true|valid|acceptable|plausible|possible|defensible"
    r"|reasonable|works?|answers?)\b",
    re.IGNORECASE,
)
_CLAUSE_REJECTS = re.compile(
    r"\b(?:not|never|no|wrong|incorrect|false|traps?|distractors?|mistakes?|unrelated|irrelevant)\b|n't",
    re.IGNORECASE,
)


def _offered_too(text: str, end: int) -> bool:
    """Whether the other letter ending at ``end`` is offered as an answer too: "B or C", "(C) higher
    accuracy and (B) faster response", "and A is also correct"; not "and A is a common trap"."""
    clause = _OWN_CLAUSE.match(text, end)
    if clause is None:
        return True
    rest = clause.group("rest")
    return not _CLAUSE_REJECTS.search(rest) and bool(_CLAUSE_ACCEPTS.search(rest))


def _choice_hedged(text: str, end: int, letter: str) -> bool:
    """Whether the letter ending at ``end`` is offered together with another one."""
    m = _HEDGE_AFTER.match(text, end)
    if (
        m is not None
        and m.group("other") != letter.upper()
        and not _NEGATED_AFTER.match(text[m.end() : m.end() + 80])
        and _offered_too(text, m.end())
    ):
        return True  # "B or C" (but not "B and C is wrong")
    stop = _HEDGE_STOP.search(text, end, end + _MAX_VALUE)
    later = text[end : stop.start() if stop else end + _MAX_VALUE]
    for h in _HEDGE_LATER.finditer(later):
        other = h.group("o1") or h.group("o2") or h.group("o3")
        if other and other.upper() != letter.upper() and _offered_too(later, h.end()):
            return True
    return False


def _choice_value(text: str) -> tuple[str | None, bool]:
    """Read a strongly declared value (a field, ``\\boxed``, "Final answer:" line) as a letter."""
    m = _VALUE_LETTER.match(text)
    if m is None:
        inner = _choice_answer_is(text)
        if inner:
            return inner[-1].value, inner[-1].hedged
        return None, False
    letter = m.group("letter")
    if _word_letter(letter, text[m.end() :]):
        return None, False  # "A cell membrane": the article ("I think ...": the pronoun)
    if _choice_hedged(text, m.end(), letter):
        return None, True
    return letter.upper(), False


# "A) ...\nB) ...": a letter opening a list of options is not a declared answer (also when
# blank lines separate the items: "each answer:\n\nA. ...\n\nB. ...")
_OPTION_LIST = _Ranged(r"[A-D][.):][ \t]+[^\n]*\n(?:[ \t]*\n)*[ \t]*(?:[-*][ \t]*)?(?:\*\*|__)?\(?[A-D][.):]")


def _choice_answer_is(text: str) -> list[_Declared]:
    out = []
    for pattern in _CHOICE_ANSWER_IS:
        for m in pattern.finditer(text):
            letter = m.group("letter")
            if _OPTION_LIST.match(text, m.start("letter")):
                continue  # "Let me check each answer:\nA) ...\nB) ..."
            if _hypothetical(text, m.start("letter")):
                continue  # "It's tempting to say the answer is A, ..."
            if letter == "A" and "\n" in text[m.start() : m.start("letter")] and _article(text[m.end("letter") :]):
                continue  # "### Answer⏎A cell organelle ...": the article opening the line below
            if letter == "I" and _word_letter(letter, text[m.end("letter") :]):
                continue  # "Answer: I think it's B": the pronoun (only read with options to I)
            hedged = _choice_hedged(text, m.end("letter"), letter)
            out.append(_Declared(m.start(), m.end("letter"), "answer_is", None if hedged else letter.upper(), hedged))
    return out


def _choice_declarations(text: str) -> list[_Declared]:
    declared = _field_declarations(text, _choice_value, number_ok=False)
    for start, end, contents in _boxed_spans(text):
        value, hedged = _choice_value(contents.strip())
        declared.append(_Declared(start, end, "boxed", value, hedged, contents))
    prose = _choice_answer_is(text)
    for m in _FINAL_LABEL_CHOICE.finditer(text):
        if not any(p.start >= m.start() and p.start < m.end() for p in prose):
            value, hedged = _choice_value(m.group("val"))  # "Final answer: cannot be determined"
            declared.append(_Declared(m.start(), m.end(), "answer_is", value, hedged, m.group("val")))
    declared.extend(prose)
    if declared:
        last = max(declared, key=lambda d: d.end)
        declared.extend(_choice_corrections(text, last.end, last.value))
    return declared


# "Answer: A. Wait, that's wrong: it's B.", "Oops, I meant C", "Actually, no -- ATP is made in
# mitochondria, so it's B": a declared letter withdrawn after it (see retraction_re)
_CHOICE_RETRACTION = _Ranged(
    retraction_re(
        r"(?:the\s+)?(?:correct|right|real|true|actual)\s+(?:letter|one)\s+is",
        r"[\s:=]*(?:(?:actually|really|just|only)\s+)?(?:(?:option|choice|letter)\s+)?"
        + _MARKUP
        + r"[\(\[]?\s*"
        + _LETTER,
    ).pattern,
    re.IGNORECASE,
)


# what may follow the retraction's letter: the end of its clause, the option's text in brackets
# or after ")", a reason; never a clause about the option ("Wait, it's A that makes ATP")
_RETRACTED_LETTER_END = re.compile(
    r"[ \t]*(?:\*\*|__|\$)?[ \t]*(?:\Z|[.,;:!?\n()\]—–-]|(?:because|since|as|instead|rather|not|then)\b)",
    re.IGNORECASE,
)


def _choice_corrections(text: str, after: int, current: str | None) -> list[_Declared]:
    """Retractions after the reply's last declared letter (``current``, ending at ``after``)
    that name another letter ("B or C" there is a hedge); one restating ``current`` is none."""
    out = []
    for m in _CHOICE_RETRACTION.finditer(text, after):
        letter = m.group("letter").upper()
        if _choice_hedged(text, m.end("letter"), letter):
            out.append(_Declared(m.start(), m.end("letter"), "correction", None, True))
            current = None
        elif letter != current and _RETRACTED_LETTER_END.match(text, m.end("letter")):
            current = letter
            out.append(_Declared(m.start(), m.end("letter"), "correction", letter))
    return out


# --- MMLU letters outside declarations -------------------------------------------------------

_LONE_RE = _Ranged(r"^[\s*_`\"'(\[]*(?P<letter>[A-Da-d])[\s*_`\"')\].:]*$")
_START_RE = _Ranged(r"^[\s*_`\"']*(?:\((?P<p>[A-Da-d])\)|(?P<letter>[A-D])\s*[.):](?!\d))")
# a letter alone on the reply's first line, the explanation below it ("B\n\nRibosomes ..."),
# unless the next line is another letter alone (a list of the options' letters)
_FIRST_LINE_RE = _Ranged(r"^[ \t*_`\"']*(?P<letter>[A-D])[ \t*_`\"']*\n(?![ \t]*\n*[ \t*_]*[A-D][ \t*_]*(?:\n|$))")


def _choice_declared(text: str, choices: Sequence[str] | None, flexible: bool) -> Extraction | None:
    got = _resolve(text, _choice_declarations(text))
    if got is None or isinstance(got, Extraction):
        return got
    if got.value is not None:
        return Extraction(got.value, got.method)
    if flexible and got.raw:  # "answer": "Golgi apparatus" — the option's text
        raw = re.sub(r"\\(?:text|textbf|mathrm)\{([^{}]*)\}", r"\1", got.raw)
        return _choice_option_text(raw, choices, containment=False)
    return _NONE


def _choice_strict(text: str, choices: Sequence[str] | None = None) -> Extraction:
    with answer_letters(choices):  # A-D, or up to A-J for a question with more options
        return _choice_strict_read(text, choices)


def _choice_strict_read(text: str, choices: Sequence[str] | None) -> Extraction:
    text = _readable(text)
    declared = _choice_declared(text, choices, flexible=False)
    if declared is not None:
        return declared
    return _choice_shapes(text, choices)


def _is_label(mention: _Mention, labels: list[tuple[int, int, str]]) -> bool:
    return any(mention.start <= start < mention.end for start, _end, _letter in labels)


def _choice_shapes(
    text: str,
    choices: Sequence[str] | None,
    mentions: list[_Mention] | None = None,
    labels: list[tuple[int, int, str]] | None = None,
) -> Extraction:
    """A lone letter, a letter opening the reply, or a single parenthesised letter; never the
    labels of a reply that goes through the options ("A) Incorrect. ...\nB) Correct. ...")."""
    m = _LONE_RE.match(text)
    if m:
        return Extraction(m.group("letter").upper(), "lone_letter")
    if labels is None:
        labels = _enumeration_labels(text)
    m = _START_RE.match(text)
    opening = m.start("p") if m and m.group("p") else (m.start("letter") if m else -1)
    if (
        m
        and not _NEGATED_AFTER.match(text[m.end() - (1 if m.group("letter") else 0) :][:80])
        and not any(start == opening for start, _end, _letter in labels)
    ):
        return Extraction((m.group("p") or m.group("letter")).upper(), "letter_start")
    m = _FIRST_LINE_RE.match(text)
    if m:
        return Extraction(m.group("letter"), "letter_start")
    if mentions is None:
        mentions = _letter_mentions(text, choices)
    parens = {m.letter for m in mentions if m.paren and text[m.start + 1].isupper()}
    if len(parens) == 1:
        return Extraction(parens.pop(), "paren_letter")
    return _NONE


def _choice_option_text(text: str, choices: Sequence[str] | None, *, containment: bool) -> Extraction:
    if not choices:
        return _NONE
    norm_choices = [_norm_text(str(c)) for c in choices[: len(CHOICE_LETTERS)]]
    norm = _norm_text(text)
    for i, c in enumerate(norm_choices):
        if c and norm == c:
            return Extraction(CHOICE_LETTERS[i], "option_text")
    # "the answer is <option text>"
    said = list(re.finditer(r"(?:answer|option|choice)\s*(?:is|would\s+be|=|:)\s*", text, re.IGNORECASE))
    m = said[-1] if said else None
    if m is not None:
        tail = _norm_text(re.split(r"[.\n]", text[m.end() :] + ".", maxsplit=1)[0])
        from rapidfuzz import fuzz

        scored = [(fuzz.ratio(tail, c), i) for i, c in enumerate(norm_choices) if c]
        if scored:
            best = max(scored)
            if best[0] >= 90 and sum(1 for s, _ in scored if s == best[0]) == 1:
                return Extraction(CHOICE_LETTERS[best[1]], "option_text")
    if containment:
        found = []
        for i, c in enumerate(norm_choices):
            if len(c) >= 2 and re.search(r"(?<![\w])" + re.escape(c) + r"(?![\w])", norm):
                found.append(i)
        # drop options contained in another found option ("Vitamin C" inside "Vitamin C and D")
        found = [i for i in found if not any(j != i and norm_choices[i] in norm_choices[j] for j in found)]
        if len(found) == 1:
            return Extraction(CHOICE_LETTERS[found[0]], "option_text")
    return _NONE


def _choice_letters(
    text: str,
    choices: Sequence[str] | None,
    mentions: list[_Mention] | None = None,
    labels: list[tuple[int, int, str]] | None = None,
) -> Extraction:
    """Letters outside declarations: when every mention names one letter, that letter
    (``first_letter``); when they differ, the last one stated as the conclusion ("so C",
    "C is correct": ``conclusion``), else the first that is not just the label of a restated
    option; two letters offered together are a hedge."""
    if mentions is None:
        mentions = _letter_mentions(text, choices)
    if labels is None:
        labels = _enumeration_labels(text)
    kept: list[_Mention] = []
    hedge_end, hedged = -1, False
    for mention in mentions:
        if mention.start < hedge_end:
            continue  # the second letter of a hedge
        hedge = _HEDGE_AFTER.match(text, mention.end - (1 if mention.paren else 0))
        if hedge is not None and hedge.group("other") != mention.letter and _offered_too(text, hedge.end()):
            hedge_end, hedged = hedge.end(), True
            continue
        kept.append(mention)
    if not kept:
        return _HEDGED if hedged else _NONE
    if len({k.letter for k in kept}) > 1:
        final = _final_line_letter(text, kept)
        if final is not None:
            return Extraction(final, "conclusion")
        for k in reversed(kept):
            after = text[k.end : k.end + 80]
            if (
                _CONCLUSION_AFTER.match(after)
                or _TABLE_YES.match(after)
                or _line_verdict(text, k.start, k.end)
                or (_CONCLUSION_BEFORE.search(text[max(0, k.start - 40) : k.start]))
            ):
                return Extraction(k.letter, "conclusion")
        # "A) Mitochondria\nB) Ribosome\n...": restated options without a verdict choose nothing
        kept = [k for k in kept if not _is_label(k, labels) or _line_verdict(text, k.start, k.end)]
        if not kept:
            return _NONE
    return Extraction(kept[0].letter, "first_letter")


_OPENS_WITH_LETTER = _Ranged(r"[ \t>*_#-]*\(?[A-D][.):\s*]")


def _final_line_letter(text: str, kept: list[_Mention]) -> str | None:
    """The letter that opens the reply's last line ("**C) Changing social norms**") after an
    analysis, unless that line is just the last item of a list of options."""
    lines = [(m.start(), m.end()) for m in re.finditer(r"[^\n]*\S[^\n]*", text)]
    if len(lines) < 2:
        return None
    (last_start, last_end), (prev_start, _prev_end) = lines[-1], lines[-2]
    for k in kept:
        if last_start <= k.start < last_end and not text[last_start : k.start].strip(" \t*_#>(-"):
            prev = _OPENS_WITH_LETTER.match(text, prev_start)
            if prev and ord(k.letter) == ord(prev.group(0).strip(" \t>*_#-(")[0]) + 1:
                return None  # "...\nC) ...\nD) ...": the next item of a list, not a conclusion
            return k.letter
    return None


def _choice_flexible(text: str, choices: Sequence[str] | None) -> Extraction:
    with answer_letters(choices):  # A-D, or up to A-J for a question with more options
        return _choice_flexible_read(text, choices)


def _choice_flexible_read(text: str, choices: Sequence[str] | None) -> Extraction:
    text = _readable(text)
    declared = _choice_declared(text, choices, flexible=True)
    if declared is not None:
        return declared  # a declared answer: nothing else in the reply is read
    mentions = _letter_mentions(text, choices)
    labels = _enumeration_labels(text)
    shaped = _choice_shapes(text, choices, mentions, labels)
    if not shaped.failed:
        return shaped
    by_text = _choice_option_text(text, choices, containment=False)
    if not by_text.failed:
        return by_text
    letter = _choice_letters(text, choices, mentions, labels)
    if not letter.failed or letter is _HEDGED:
        return letter
    # an option's text anywhere in the reply, except in the lines that restate the options
    return _choice_option_text(_enumerated_lines(text, labels), choices, containment=True)


# ---------------------------------------------------------------------------------------------
# evaluator
# ---------------------------------------------------------------------------------------------
