"""Option-letter answer extraction (MMLU's), the letters a reply mentions: where a letter is an answer-shaped
mention and where it is notation, a label, a negation, the English article or part of a list of
the options (``A) Incorrect ...``), and the verdict a line gives an option.

Split from :mod:`._extract_choice` (which reads declared answers and the strict and flexible shapes
from these mentions) to keep each module readable; the rules are listed in :mod:`._exact_match`.
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
from evalcore.evaluators._extract_common import _MAX_VALUE, _hypothetical, _line_start

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
