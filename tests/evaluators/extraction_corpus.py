"""A corpus of realistic model replies for GSM8K and MMLU answer extraction (issue 14).

Every case carries the value and method expected in *both* modes. Two parts:

* **composed**: worked solutions written the way chat models write them (markdown steps,
  LaTeX, option-by-option analysis, headings, traps such as "long-answer", "$25,000/year",
  "magnetic field strength (B)", ``$A$``, "not (C)") combined with the ways models finish a
  reply (``#### 72``, "The answer is", "**Final Answer:**", ``\\boxed{}``, a JSON object with
  ``reasoning`` and ``answer``, a fenced YAML block, a hedge, a self-correction, no
  declaration at all). The expectation follows from the ending, which is what the rules say.
* **hand-written**: single replies for shapes the composition does not cover (refusals,
  tables, Python dicts, nested JSON, lists as answers, truncated output...).

All texts were written for this project; none is copied from a model or a data set.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

Expected = tuple[str | None, str]


@dataclass(frozen=True)
class Case:
    """One reply and what both extraction modes must read from it."""

    id: str
    dataset: str  # "gsm8k" or "mmlu"
    response: str
    strict: Expected
    flexible: Expected
    choices: tuple[str, ...] | None = None


NONE: Expected = (None, "none")
HEDGED: Expected = (None, "hedged")

# =============================================================================================
# GSM8K: worked solutions (no declared answer inside) and the ways a reply ends
# =============================================================================================


@dataclass(frozen=True)
class Problem:
    key: str
    body: str  # the worked solution, without any declared answer
    n: str  # the canonical final number
    shown: str  # how the reply writes it ("$1,248.00")
    wrong: str  # a different number the reply may also mention
    unit: str


GSM_PROBLEMS = [
    Problem(
        "clips",
        "Let's break this down step by step.\n\n"
        "**Step 1: Clips sold in April**\n"
        "Natalia sold 48 clips to her friends in April.\n\n"
        "**Step 2: Clips sold in May**\n"
        "In May she sold half as many clips as in April:\n"
        "\\[ \\frac{48}{2} = 24 \\]\n\n"
        "**Step 3: Add both months**\n"
        "\\[ 48 + 24 = 72 \\]\n\n"
        "So altogether Natalia sold 72 clips in April and May.",
        "72",
        "72",
        "96",
        "clips",
    ),
    Problem(
        "babysitting",
        "Weng earns $12/hour for babysitting. Yesterday she babysat for 50 minutes.\n\n"
        "First, convert the hourly rate into a per-minute rate:\n"
        "- $12/hour ÷ 60 minutes/hour = $0.20/minute\n\n"
        "Then multiply by the number of minutes she worked:\n"
        "- 0.20 × 50 = 10\n\n"
        "She earned $10 for 50 minutes of work.",
        "10",
        "$10",
        "600",
        "dollars",
    ),
    Problem(
        "wallet",
        "Here is how I arrived at the answer:\n\n"
        "1. The wallet costs $100, and Betty has only half of the money: 100 / 2 = $50.\n"
        "2. Her parents give her $15.\n"
        "3. Her grandparents give her twice as much as her parents: 15 * 2 = $30.\n"
        "4. In total she now has 50 + 15 + 30 = $95.\n"
        "5. She still needs 100 - 95 = $5.\n\n"
        "Betty needs $5 more to buy the wallet.",
        "5",
        "$5",
        "95",
        "dollars",
    ),
    Problem(
        "letters",
        "#### Step 1: Pages per week\n"
        "James writes a 3-page letter to 2 different friends twice a week.\n"
        "Pages per letter round: 3 × 2 = 6 pages.\n"
        "Twice a week: 6 × 2 = 12 pages per week.\n\n"
        "#### Step 2: Pages per year\n"
        "There are 52 weeks in a year, so 12 × 52 = 624 pages.\n\n"
        "He writes 624 pages a year.",
        "624",
        "624",
        "312",
        "pages",
    ),
    Problem(
        "salary",
        "Tom currently earns $25,000/year. His company gives him a 10% raise.\n\n"
        "* Raise amount: $25,000/year × 0.10 = $2,500/year\n"
        "* New salary: $25,000 + $2,500 = $27,500/year\n\n"
        "His new salary is $27,500/year.",
        "27500",
        "$27,500",
        "25000",
        "dollars per year",
    ),
    Problem(
        "test_points",
        "The test has 10 short-answer questions worth 2 points each and 5 long-answer questions "
        "worth 3 points each. Sam got 80% of the short-answer questions and 60% of the long-answer "
        "questions right.\n\n"
        "Points from short-answer = 10 * 80% * 2 = 16\n"
        "Points from long-answer = 5 * 60% * 3 = 9\n\n"
        "Total points = 16 + 9 = 25",
        "25",
        "25",
        "34",
        "points",
    ),
    Problem(
        "quiz",
        "Let me think about this carefully.\n\n"
        "In the first round there were 40 questions and in the second round 30, so the number of "
        "questions he could answer: 40 + 30 = 70.\n"
        "He got 80% of them right: 70 × 0.8 = 56.\n\n"
        "He answered 56 questions correctly.",
        "56",
        "56",
        "70",
        "questions",
    ),
    Problem(
        "notebooks",
        "Each notebook costs $3.70 and Maria buys 5 of them.\n\n"
        "$$5 \\times 3.70 = 18.50$$\n\n"
        "She pays $18.50 in total (no tax applies).",
        "18.5",
        "$18.50",
        "18",
        "dollars",
    ),
    Problem(
        "farm",
        "The farm had 1,040 chickens at the start of the year. During the year the flock grew by 20%.\n\n"
        "Growth: 1,040 × 0.20 = 208 chickens\n"
        "End of year: 1,040 + 208 = 1,248 chickens\n\n"
        "| Quantity | Value |\n|---|---|\n| Start | 1,040 |\n| Growth | 208 |\n| End | 1,248 |",
        "1248",
        "1,248",
        "1200",
        "chickens",
    ),
    Problem(
        "temperature",
        "The temperature at 6 pm was 8°C and it dropped by 3°C every hour.\n"
        "After 4 hours it had dropped 3 × 4 = 12°C in total.\n"
        "So at 10 pm it was 8 − 12 = −4°C.",
        "-4",
        "-4",
        "4",
        "degrees Celsius",
    ),
]


def _gsm_endings(p: Problem) -> list[tuple[str, str, Expected, Expected]]:
    """(name, response, strict, flexible) for every way a reply to ``p`` ends."""
    n, shown, wrong = p.n, p.shown, p.wrong
    declared = lambda method: ((n, method), (n, method))  # noqa: E731
    out = [
        ("hash", f"{p.body}\n\n#### {shown}", *declared("hash")),
        ("answer_is", f"{p.body}\n\nThe answer is {shown}.", *declared("answer_is")),
        ("final_answer_bold", f"{p.body}\n\n---\n\n**Final Answer:** {shown} {p.unit}", *declared("answer_is")),
        (
            "boxed",
            f"{p.body}\n\nTherefore, the final answer is $\\boxed{{{shown.replace('$', '')}}}$.",
            *declared("boxed"),
        ),
        (
            "json_object",
            json.dumps({"reasoning": p.body, "answer": json.loads(n) if "." not in n else float(n)}),
            *declared("json_field"),
        ),
        (
            "json_fenced",
            "Here is my solution in the requested format:\n\n```json\n"
            + json.dumps(
                {"steps": p.body.split("\n\n"), "final_answer": f"{shown} {p.unit}", "confidence": 0.9}, indent=2
            )
            + "\n```",
            *declared("json_field"),
        ),
        (
            "yaml_fenced",
            "```yaml\nreasoning: |\n"
            + "\n".join("  " + line for line in p.body.splitlines())
            + f"\nanswer: {shown}\n```",
            *declared("yaml_field"),
        ),
        ("no_declaration", f"{p.body}\n\nIn total that makes {shown} {p.unit}.", NONE, (n, "last_number")),
        ("hedge_or", f"{p.body}\n\nThe answer is {shown} or {wrong}.", HEDGED, HEDGED),
        (
            "self_correction",
            f"{p.body.split(chr(10) + chr(10))[0]}\n\nThe answer is {wrong}.\n\n"
            f"Wait, I made a mistake above. Let me recompute carefully.\n\n{p.body}\n\nThe answer is {shown}.",
            *declared("answer_is"),
        ),
        (
            "declared_without_number",
            json.dumps({"reasoning": p.body, "answer": "Cannot be determined from the information given"}),
            NONE,
            NONE,
        ),
        ("qa_prefix", f"Q: {p.key.replace('_', ' ')}?\n{p.body}\n\nA: {shown}", NONE, (n, "answer_prefix")),
    ]
    return out


def _gsm_composed() -> list[Case]:
    return [
        Case(f"gsm8k/{p.key}/{name}", "gsm8k", text, strict, flexible)
        for p in GSM_PROBLEMS
        for name, text, strict, flexible in _gsm_endings(p)
    ]


# =============================================================================================
# MMLU: option-by-option analyses (no declared answer inside) and the ways a reply ends
# =============================================================================================


@dataclass(frozen=True)
class Question:
    key: str
    choices: tuple[str, str, str, str]
    body: str  # reasoning without a declared answer
    x: str  # the letter the reply settles on
    y: str  # another letter it weighs
    parens: bool  # whether the body has parenthesised letters that could be answers ("Option (A)")


MMLU_QUESTIONS = [
    Question(
        "fertility",
        (
            "Biological changes in fecundity",
            "Government mandates on family size",
            "Changing social norms and the rising cost of raising children",
            "Climate change",
        ),
        "Let's think about what drives fertility decline in industrialized countries.\n\n"
        "The decline is not due to biological changes (A) in people's ability to have children; "
        "fecundity has stayed roughly the same. Government mandates on family size exist in very few "
        "countries, so they cannot explain a decline seen across almost all industrialized nations. "
        "Climate change is far too recent to explain a trend that began in the 19th century.\n\n"
        "What remains is the change in social norms: more education for women, urbanization, and "
        "children becoming an economic cost rather than a source of labour.",
        "C",
        "A",
        False,
    ),
    Question(
        "similar_matrices",
        ("They have the same eigenvalues", "They are equal", "They commute", "They are both diagonal"),
        "Recall the definition: $A$ and $B$ are similar if there is an invertible matrix $P$ with "
        "$A = PBP^{-1}$.\n\n"
        "Since $A$ and $B$ are similar, their characteristic polynomials agree:\n"
        "$$\\det(A - \\lambda I) = \\det(P(B - \\lambda I)P^{-1}) = \\det(B - \\lambda I)$$\n"
        "so the eigenvalues are identical. Similar matrices need not be equal, need not commute "
        "(take $B$ diagonal and $P$ a rotation), and need not be diagonal themselves.",
        "A",
        "C",
        False,
    ),
    Question(
        "emf",
        (
            "The resistance of the loop",
            "The mass of the loop",
            "The rate of change of magnetic flux",
            "The temperature of the wire",
        ),
        "By Faraday's law, the induced EMF is $\\varepsilon = -\\frac{d\\Phi_B}{dt}$, where the flux "
        "depends on the magnetic field strength (B) and the area of the loop.\n\n"
        "The circuit in the question is built from resistors (R) and capacitors (C), but those set the "
        "current that flows, not the EMF itself. The mass of the loop and the temperature of the wire "
        "play no role in the induced EMF either.\n\n"
        "Only a changing flux through the loop induces an EMF.",
        "C",
        "B",
        False,
    ),
    Question(
        "organelle",
        ("Mitochondrion", "Ribosome", "Nucleus", "Golgi apparatus"),
        "We need the site of protein synthesis in the cell.\n\n"
        "- Option (A), the mitochondrion, produces ATP through cellular respiration.\n"
        "- Option (B), the ribosome, translates mRNA into a chain of amino acids.\n"
        "- Option (C), the nucleus, stores the DNA and is where transcription happens.\n"
        "- Option (D), the Golgi apparatus, modifies and packages proteins after they are made.\n\n"
        "Translation of mRNA is protein synthesis.",
        "B",
        "D",
        True,
    ),
    Question(
        "organelle_list",
        ("Mitochondrion", "Ribosome", "Nucleus", "Golgi apparatus"),
        "Let's evaluate each option:\n"
        "A) Mitochondrion — produces ATP through respiration; incorrect.\n"
        "B) Ribosome — reads the mRNA codons and links amino acids into a polypeptide.\n"
        "C) Nucleus — stores DNA and is where transcription happens; not the answer.\n"
        "D) Golgi apparatus — modifies and ships proteins made elsewhere ✗\n\n"
        "Protein synthesis (translation) is carried out by one of these only.",
        "B",
        "D",
        False,
    ),
    Question(
        "ensembles",
        ("Lower memory use", "Faster response", "Higher accuracy", "Simpler interpretation"),
        "Ensemble methods combine several models (bagging, boosting, stacking).\n\n"
        "1. Memory: every member has to be stored, so memory use grows, it does not shrink.\n"
        "2. Speed: predicting with many models is slower than with one.\n"
        "3. Accuracy: averaging reduces variance, and boosting reduces bias.\n"
        "4. Interpretation: a forest of 500 trees is harder to read than a single tree.\n\n"
        "The main advantage is predictive performance.",
        "C",
        "B",
        False,
    ),
    Question(
        "ww1",
        ("1914", "1918", "1939", "1945"),
        "World War I began in 1914 after the assassination of Archduke Franz Ferdinand. The fighting "
        "ended with the armistice of 11 November 1918, although the Treaty of Versailles was only "
        "signed in 1919. The years 1939 and 1945 are the start and the end of World War II.",
        "B",
        "A",
        False,
    ),
    Question(
        "scurvy",
        ("Vitamin A", "Vitamin B12", "Vitamin C", "Vitamin D"),
        "Scurvy was common among sailors on long voyages without fresh fruit.\n\n"
        "* A lack of vitamin A causes night blindness.\n"
        "* A lack of vitamin B12 causes pernicious anaemia.\n"
        "* A lack of vitamin D causes rickets in children.\n\n"
        "Citrus fruit cured scurvy because it is rich in ascorbic acid, which is vitamin C.",
        "C",
        "D",
        False,
    ),
    Question(
        "lookup",
        ("Linked list", "Binary heap", "Hash table", "Sorted array"),
        "We want O(1) average-case lookup by key.\n\n"
        "A linked list needs a linear scan, O(n). A binary heap only gives fast access to the minimum; "
        "finding an arbitrary key is O(n). A sorted array supports binary search, O(log n), e.g. "
        "`bisect(A, key)` over `A[0..n-1]`. A hash table computes `h(key)` and jumps to the bucket "
        "directly, which is O(1) on average.",
        "C",
        "B",
        False,
    ),
]


def _mmlu_endings(q: Question) -> list[tuple[str, str, Expected, Expected]]:
    """(name, response, strict, flexible) for every way a reply to ``q`` ends."""
    x, y = q.x, q.y
    opt_x, opt_y = q.choices["ABCD".index(x)], q.choices["ABCD".index(y)]
    declared = lambda method: ((x, method), (x, method))  # noqa: E731
    # with no declaration, the letters in the body decide between a conclusion and a first mention
    therefore_flex = (x, "conclusion") if q.parens else (x, "first_letter")
    must_be = ((None, "none"), (x, "conclusion")) if q.parens else ((x, "paren_letter"), (x, "paren_letter"))
    return [
        ("answer_is", f"{q.body}\n\nThe answer is ({x}).", *declared("answer_is")),
        ("answer_bold", f"{q.body}\n\n**Answer:** {x}", *declared("answer_is")),
        ("final_answer_paren", f"{q.body}\n\nFinal answer: ({x}) {opt_x}", *declared("answer_is")),
        ("boxed", f"{q.body}\n\nThus the correct choice is\n$$\\boxed{{{x}}}$$", *declared("boxed")),
        ("json_object", json.dumps({"reasoning": q.body, "answer": x}), *declared("json_field")),
        (
            "json_fenced",
            "```json\n"
            + json.dumps({"analysis": q.body, "final_answer": f"{x}) {opt_x}", "confidence": "high"}, indent=2)
            + "\n```",
            *declared("json_field"),
        ),
        (
            "yaml_fenced",
            "```yaml\nexplanation: >\n"
            + "\n".join("  " + line for line in q.body.splitlines() if line.strip())
            + f"\nanswer: {x}\n```",
            *declared("yaml_field"),
        ),
        ("json_two_letters", json.dumps({"reasoning": q.body, "answer": f"{y}, {x}"}), HEDGED, HEDGED),
        (
            "bold_two_options",
            f"{q.body}\n\nThe correct answers are **({x}) {opt_x.lower()}** and **({y}) {opt_y.lower()}**.",
            HEDGED,
            HEDGED,
        ),
        (
            "self_correction",
            f"{q.body}\n\nThe answer is {y}.\n\nWait, rereading the question, I mixed up two options. "
            f"Checking again, {opt_x.lower()} fits the question. The answer is {x}.",
            *declared("answer_is"),
        ),
        ("therefore_correct", f"{q.body}\n\nTherefore, {x} is correct.", NONE, therefore_flex),
        ("final_line_option", f"{q.body}\n\n**{x}) {opt_x}**", NONE, therefore_flex),
        ("not_but", f"{q.body}\n\nThe answer is not ({y}), so it must be ({x}).", *must_be),
        ("json_option_text", json.dumps({"reasoning": q.body, "answer": opt_x}), NONE, (x, "option_text")),
        (
            "answer_first",
            f"**Answer: {x}**\n\n**Explanation:**\n{q.body}\n\nOption {y} is a common distractor here.",
            *declared("answer_is"),
        ),
    ]


def _mmlu_composed() -> list[Case]:
    return [
        Case(f"mmlu/{q.key}/{name}", "mmlu", text, strict, flexible, q.choices)
        for q in MMLU_QUESTIONS
        for name, text, strict, flexible in _mmlu_endings(q)
    ]


# =============================================================================================
# hand-written replies
# =============================================================================================

ORGANELLES = ("Mitochondrion", "Ribosome", "Nucleus", "Golgi apparatus")


def _g(key: str, text: str, strict: Expected, flexible: Expected | None = None) -> Case:
    return Case(f"gsm8k/hand/{key}", "gsm8k", text, strict, strict if flexible is None else flexible)


def _m(
    key: str,
    text: str,
    strict: Expected,
    flexible: Expected | None = None,
    choices: tuple[str, ...] | None = ORGANELLES,
) -> Case:
    return Case(f"mmlu/hand/{key}", "mmlu", text, strict, strict if flexible is None else flexible, choices)


GSM_HAND = [
    # the reproduced failures
    _g(
        "list_marker_after_answer",
        "Here is how I arrived at the answer:\n\n1. First, I found the price per apple: $6 / 3 = $2.\n"
        "2. Then I multiplied by the number of apples she wants: 2 × 7 = 14.\n\nShe pays $14.",
        NONE,
        ("14", "last_number"),
    ),
    _g(
        "long_answer_compound",
        "Points from short-answer = 10 * 50% * 2 = 10\nPoints from long-answer = 5 * 60% * 5 = 15\n"
        "Total = 10 + 15 = 25 points",
        NONE,
        ("25", "last_number"),
    ),
    _g(
        "answer_as_verb",
        "There were 40 easy and 30 hard questions, so the number of questions he could answer: 40 + 30 = 70.\n"
        "He skipped 14 of them, so he attempted 70 - 14 = 56.",
        NONE,
        ("56", "last_number"),
    ),
    _g(
        "unit_after_slash",
        "Her old salary was $20,000/year and she now earns $25,000/year.",
        NONE,
        ("25000", "last_number"),
    ),
    _g("unit_after_slash_declared", "The answer is $25,000/year.", ("25000", "answer_is")),
    _g(
        "declared_field_without_number",
        '{"reasoning": "We know the total is 120 and that 3 friends share it, but not how many '
        'were eaten, so 120 / 3 = 40 is only an upper bound.", "answer": "Cannot be determined"}',
        NONE,
    ),
    _g(
        "json_calculation_in_field",
        '{"reasoning": "She buys 12 pens at $5 each.", "answer": "12 * 5 = 60"}',
        ("60", "json_field"),
    ),
    _g("json_dollar_string", '{"reasoning": "3 shirts at $25 each", "answer": "$75.00"}', ("75", "json_field")),
    # JSON variants
    _g(
        "json_number_after_reasoning_mentions_other",
        '{\n  "reasoning": "First I thought 5 * 12 = 60, but the question asks for the change from $100: '
        '100 - 60 = 40.",\n  "answer": 40\n}',
        ("40", "json_field"),
    ),
    _g(
        "json_answer_first",
        '{"answer": 18, "reasoning": "Janet has 16 eggs, eats 3 and bakes with 4: 16 - 3 - 4 = 9. '
        'She sells 9 at $2, so 9 * 2 = 18."}',
        ("18", "json_field"),
    ),
    _g(
        "json_python_dict",
        "{'reasoning': 'There are 7 days in a week and she walks 3 miles a day, 7 * 3 = 21.', 'answer': '21'}",
        ("21", "json_field"),
    ),
    _g(
        "json_nested_value",
        '```json\n{\n  "steps": ["20 * 3 = 60", "60 + 15 = 75"],\n  "final_answer": {"value": 75, "unit": "minutes"}\n}\n```',
        ("75", "json_field"),
    ),
    _g("json_list_single", '{"answer": ["42"]}', ("42", "json_field")),
    _g("json_list_two", '{"reasoning": "It depends on rounding.", "answer": [42, 43]}', HEDGED),
    _g("json_null", '{"reasoning": "The problem gives no prices.", "answer": null}', NONE),
    _g(
        "json_two_objects_no_cue",
        'Option 1:\n```json\n{"answer": 12}\n```\nOption 2:\n```json\n{"answer": 15}\n```',
        HEDGED,
    ),
    _g("json_key_capitalised", '{"Reasoning": "8 * 4 = 32 legs", "Answer": "32 legs"}', ("32", "json_field")),
    _g(
        "json_final_answer_text",
        '{"thought": "Each box has 6 eggs and there are 9 boxes.", "final_answer": "There are 54 eggs in total."}',
        ("54", "json_field"),
    ),
    _g(
        "json_beats_prose",
        'The answer is 30.\n\n{"reasoning": "Recounting: 12 + 15 + 6 = 33", "answer": 33}',
        ("33", "json_field"),
    ),
    _g("json_string_with_commas", '{"answer": "1,234,567"}', ("1234567", "json_field")),
    _g(
        "json_truncated",
        '{"reasoning": "Each ticket costs $8 and they need 9 tickets, so 8 * 9 = 72", "answer": 72',
        ("72", "json_field"),
    ),
    _g("json_negative", '{"answer": -15, "reasoning": "The balance drops below zero."}', ("-15", "json_field")),
    _g("json_fraction_float", '{"answer": 0.75}', ("0.75", "json_field")),
    # YAML
    _g("yaml_final_answer_line", "steps:\n  - 4 * 6 = 24\n  - 24 + 6 = 30\nfinal_answer: 30", ("30", "yaml_field")),
    _g("yaml_quoted", '```yaml\nanswer: "$1,500"\nunit: dollars\n```', ("1500", "yaml_field")),
    _g("yaml_block_scalar", "```yaml\nanswer: |\n  The farmer has 17 sheep left.\n```", ("17", "yaml_field")),
    # #### and \boxed
    _g(
        "hash_then_explanation",
        "Total cost = 4 × $2.50 = $10.00\n#### 10\n\nExplanation: four items at two fifty each.",
        ("10", "hash"),
    ),
    _g("hash_two_different", "#### 10\n#### 12", HEDGED),
    _g(
        "hash_correction",
        "#### 10\n\nHmm, I forgot the tip. Recalculating with 20% tip: 10 * 1.2 = 12\n#### 12",
        ("12", "hash"),
    ),
    _g("hash_bold", "Adding everything: 15 + 27 = 42\n\n#### **42**", ("42", "hash")),
    _g(
        "hash_heading_only",
        "#### Step 1\nShe reads 12 pages a day.\n#### Step 2\nIn 5 days: 12 × 5 = 60 pages.",
        NONE,
        ("60", "last_number"),
    ),
    _g("boxed_text_units", "The tank holds $\\boxed{450 \\text{ liters}}$.", ("450", "boxed")),
    _g("boxed_frac", "Each friend gets $\\boxed{\\dfrac{3}{4}}$ of a pizza.", ("0.75", "boxed")),
    _g("boxed_two_different", "Either $\\boxed{8}$ or $\\boxed{9}$, depending on rounding.", HEDGED),
    _g("boxed_no_number", "The data are inconsistent: $\\boxed{\\text{no solution}}$", NONE),
    _g("boxed_same_twice", "So $x = \\boxed{14}$.\n\n**Final answer:** $\\boxed{14}$", ("14", "boxed")),
    _g("boxed_thousands", "Total revenue: $\\boxed{12{,}500}$ dollars.", ("12500", "boxed")),
    # "answer" in prose
    _g(
        "final_answer_label_text_no_number",
        "She bought some apples, but the question never says how many.\n\n**Final Answer:** Cannot be determined.",
        NONE,
    ),
    _g(
        "answer_label_then_reasoning",
        "Answer: Let's compute. 5 boxes of 12 = 60 pencils, minus 8 broken = 52 pencils.",
        NONE,
        ("52", "last_number"),
    ),
    _g(
        "answer_to_question",
        "Adding the three days: 14 + 9 + 11 = 34.\n\nThe answer to the question is 34 miles.",
        ("34", "answer_is"),
    ),
    _g("answer_is_calculation", "The answer is 6 × 7 = 42 marbles.", ("42", "answer_is")),
    _g("my_final_answer", "So my final answer is: **$1,020**", ("1020", "answer_is")),
    _g("final_answer_colon_newline", "Total = 7 + 8 = 15\n\nFinal answer:\n15", ("15", "answer_is")),
    _g(
        "answered_is_not_answer",
        "She answered 17 questions, and each was worth 3 points, so 51.",
        NONE,
        ("51", "last_number"),
    ),
    _g(
        "answers_plural_no_number",
        "These answers are consistent: the first part gives 6 and the second 9, so 15 in all.",
        NONE,
        ("15", "last_number"),
    ),
    _g("answer_or_hedge", "I'm not completely sure; the answer is either 24 or 26.", HEDGED),
    _g("answer_or_same_value", "The answer is 24 (or 24.0 if written as a decimal).", ("24", "answer_is")),
    _g(
        "correction_wait",
        "The answer is 45.\n\nWait, that counts the first day twice. Subtracting it: 45 - 5 = 40.\nThe answer is 40.",
        ("40", "answer_is"),
    ),
    _g("two_answers_no_cue", "The answer is 45. The answer is 40.", HEDGED),
    _g("changed_then_repeated_no_cue", "The answer is 45. The answer is 40. The answer is 40.", HEDGED),
    _g(
        "two_corrections_in_a_row",
        "The answer is 45. Wait, that counts day one twice: the answer is 40. Hmm, I forgot the tip, "
        "so the answer is 42.",
        ("42", "answer_is"),
    ),
    _g("answer_is_approximately", "Rounding to two places, the answer is approximately 3.14.", ("3.14", "answer_is")),
    _g("answer_is_about_unit", "So the answer is about 30 minutes.", ("30", "answer_is")),
    _g("answer_is_clock_time", "She arrives at 2:30 pm, so the answer is 2:30 pm.", NONE),
    _g("hash_clock_time", "Leaving at 13:20 and driving 45 minutes:\n#### 14:05", NONE),
    # answers in tags, and reasoning models' scratchpads
    _g("xml_answer_tag", "Half of 84 is 42.\n<answer>42</answer>", ("42", "xml_tag")),
    _g("xml_answer_tag_multiline_dollars", "Reasoning: 6 * 7.\n<answer>\n$1,250\n</answer>", ("1250", "xml_tag")),
    _g("xml_final_answer_tag_beats_prose", "The answer is 41.\n<final_answer>42</final_answer>", ("42", "xml_tag")),
    _g("xml_answer_tag_hedge", "<answer>42 or 43</answer>", HEDGED),
    _g("xml_answer_tag_no_number", "<answer>unknown</answer>", NONE),
    _g(
        "think_block_guess_then_final",
        "<think>\nFirst guess: the answer is 20. Then 4 * 5 = 20, plus 5 = 25.\n</think>\n\n#### 25",
        ("25", "hash"),
    ),
    _g(
        "think_block_scratch_declared_differently",
        "<think>The answer is 20.</think>\n\nShe pays 5 * 5 = 25 dollars in all.\n\nThe answer is 25.",
        ("25", "answer_is"),
    ),
    _g("think_block_then_no_answer", "<think>\n9 * 2 = 18\n</think>\n\nI hope this helps!", NONE),
    _g("think_block_unclosed", "<think>\nJanet has 16 eggs ... the answer is 18", ("18", "answer_is")),
    _g("thinking_tag_then_bare_number", "<thinking>9 * 2 = 18</thinking>\n\n18", NONE, ("18", "last_number")),
    # a declared answer withdrawn after it, the new value stated without the word "answer"
    _g(
        "retracted_actually_it_is",
        "I think the answer is 20, but actually after checking, it is 25.",
        ("25", "correction"),
    ),
    _g("retracted_wait_wrong", "The answer is 20. Wait, that's wrong: it's 25.", ("25", "correction")),
    _g("retracted_next_sentence", "The answer is $20.\n\nThat's wrong. It's 25 dollars.", ("25", "correction")),
    _g("retracted_i_meant", "#### 20\n\nOops, I meant 25.", ("25", "correction")),
    _g("retracted_calculation", "The answer is 20. Actually, it is 5 * 5 = 25.", ("25", "correction")),
    _g(
        "retracted_correct_total", "**Final Answer:** 20\n\nSorry, the correct total is $1,250.", ("1250", "correction")
    ),
    _g("retracted_into_hedge", "The answer is 20. No, it's 25 or 26.", HEDGED),
    _g("retraction_restates_same", "The answer is 20.\nWait, it's 20.", ("20", "answer_is")),
    _g(
        "verifying_after_answer",
        "The answer is 25. Wait, let me check: it's 5 cm each, so 5 * 5 = 25.",
        ("25", "answer_is"),
    ),
    _g("verifying_with_a_fact", "The answer is 25. Wait, let me double-check: it's 5 cm each.", ("25", "answer_is")),
    _g("actually_not_a_value", "The answer is 20. Actually it is a nice problem with 3 steps.", ("20", "answer_is")),
    _g("retraction_after_field_ignored", '```json\n{"answer": 20}\n```\nWait, it\'s 25.', ("20", "json_field")),
    _g("answer_is_then_hash_same", "The answer is 88.\n\n#### 88", ("88", "hash")),
    _g("answer_is_percent", "The answer is 35%.", ("35", "answer_is")),
    _g("answer_is_negative", "The final answer is −7 degrees.", ("-7", "answer_is")),
    _g("answer_spelled_out", "The answer is twelve.", ("12", "answer_is")),
    _g("answer_spelled_out_unit", "So the final answer is twenty-five dollars.", ("25", "answer_is")),
    _g("answer_spelled_out_hundreds", "The answer is one hundred and five.", ("105", "answer_is")),
    _g(
        "answer_spelled_out_thousands",
        "The answer is two thousand three hundred forty-five apples.",
        ("2345", "answer_is"),
    ),
    _g("answer_words_not_a_value", "The answer is one of the two numbers we found.", NONE),
    _g("answer_words_comparison", "The answer is two more than Tom has.", NONE),
    _g("answer_words_hedge", "The answer is twelve or thirteen.", NONE),
    _g(
        "heading_final_answer_next_line",
        "Step 1: 16 - 3 - 4 = 9\nStep 2: 9 * 2 = 18\n\n### Final Answer\n18",
        ("18", "answer_is"),
    ),
    _g("heading_answer_bold_money", "She earns 9 × $2 a day.\n\n## Answer\n\n**$18**", ("18", "answer_is")),
    _g("heading_answer_hedge", "# Answer\n\n18 or 19", HEDGED),
    _g(
        "heading_answer_opens_working",
        "### Answer\n\nJanet has 16 eggs. She eats 3 and bakes 4, so 9 are left.\n\n9 * 2 = 18",
        NONE,
        ("18", "last_number"),
    ),
    # flexible-only shapes and refusals
    _g("bracket", "After both trips the bus carries [38] passengers.", NONE, ("38", "bracket")),
    _g("last_number_money", "In total she spent $1,234.50 on the renovation.", NONE, ("1234.5", "last_number")),
    _g("refusal", "I'm sorry, but I can't help with that request.", NONE),
    _g(
        "refusal_with_numbers_declared",
        "I cannot solve this: the problem mentions 3 trains and 2 stations but no speeds.\n\nFinal answer: N/A",
        NONE,
    ),
    _g("empty", "", NONE),
    _g(
        "markdown_table_no_declaration",
        "| Item | Cost |\n|---|---|\n| Pens | $4 |\n| Paper | $6 |\n| **Total** | **$10** |",
        NONE,
        ("10", "last_number"),
    ),
    _g(
        "markdown_table_then_answer",
        "| Day | Miles |\n|---|---|\n| Mon | 3 |\n| Tue | 5 |\n| Wed | 4 |\n\n**Answer:** 12 miles",
        ("12", "answer_is"),
    ),
    _g(
        "latex_display_then_answer",
        "\\[\n\\text{total} = 3 \\times 15 + 2 \\times 10 = 65\n\\]\n\nThe answer is $65$.",
        ("65", "answer_is"),
    ),
    _g("thousands_space_after_hash", "#### 12 000", ("12000", "hash")),
    _g("minerva_style", "Final Answer: The final answer is $72$. I hope it is correct.", ("72", "answer_is")),
    _g("answer_with_parenthetical", "Cost per person = 90 / 2 = 45\n\nAnswer (in dollars): 45", ("45", "answer_is")),
    _g("let_x_be_the_answer", "Let x be the answer. Then 2x + 3 = 11, so x = 4.", NONE, ("4", "last_number")),
    _g("to_find_the_answer", "To find the answer, we compute 3 + 4 = 7.", NONE, ("7", "last_number")),
    _g("answer_then_not_a_calculation", "The answer is $12, and 12 + 3 = 15 is wrong.", ("12", "answer_is")),
    _g(
        "unit_restated",
        "We get 45 minutes, or 0.75 hours. The answer is 45 minutes, or 0.75 hours.",
        ("45", "answer_is"),
    ),
    _g(
        "same_answer_repeated_after_check",
        "The answer is 5.\n\nLet me verify: 2 + 3 = 5. Correct!\n\nThe answer is 5.",
        ("5", "answer_is"),
    ),
    _g(
        "program_of_thought_no_declaration",
        "```python\neggs = 16 - 3 - 4\nanswer = eggs * 2\nprint(answer)\n```\n\nOutput: 18",
        NONE,
        ("18", "last_number"),
    ),
    _g("program_of_thought_assigns_number", "```python\nanswer = 18\nprint(answer)\n```", ("18", "answer_is")),
    _g(
        "gsm8k_reference_style",
        "Janet sells 16 - 3 - 4 = <<16-3-4=9>>9 duck eggs a day.\n"
        "She makes 9 * 2 = $<<9*2=18>>18 every day at the farmer's market.\n#### 18",
        ("18", "hash"),
    ),
]

MMLU_HAND = [
    # the reproduced failures
    _m(
        "json_answer_field",
        '{"reasoning": "The shift is not due to biological changes (A) but to changing norms.", "answer": "C"}',
        ("C", "json_field"),
    ),
    _m(
        "math_letters_no_declaration",
        "Since $A$ and $B$ are similar, $\\operatorname{tr} A = \\operatorname{tr} B$. I'm not sure which option "
        "follows.",
        NONE,
    ),
    _m(
        "label_of_quantity",
        "The force depends on the magnetic field strength (B) and the current (I) through the wire.",
        NONE,
    ),
    _m(
        "labels_resistors_capacitors",
        "In a circuit with resistors (R) and capacitors (C), the time constant is RC.",
        NONE,
    ),
    _m("negated_paren", "The correct answer is not (C) because the rate does not depend on temperature.", NONE),
    _m("bold_two_options", "The correct answers are **(C) higher accuracy** and **(B) faster response**.", HEDGED),
    _m("json_two_letters", '{"answer": "B, C"}', HEDGED),
    _m(
        "rather_than",
        "It is the ribosome rather than D, since the Golgi only packages proteins. So B.",
        NONE,
        ("B", "first_letter"),
    ),
    # JSON / YAML variants
    _m("json_paren_value", '{"reasoning": "Ribosomes translate mRNA.", "answer": "(B)"}', ("B", "json_field")),
    _m("json_option_prefix", '{"answer": "Option D", "why": "packaging"}', ("D", "json_field")),
    _m("json_lowercase", '{"answer": "c"}', ("C", "json_field")),
    _m("json_list_two", '{"answer": ["A", "C"]}', HEDGED),
    _m("json_list_one", '{"answer": ["B"]}', ("B", "json_field")),
    _m("json_python_dict", "{'answer': 'A', 'confidence': 0.7}", ("A", "json_field")),
    _m("json_answer_letter_key", '{"answer_letter": "D", "answer_text": "Golgi apparatus"}', ("D", "json_field")),
    _m("json_null", '{"reasoning": "None of the options is right.", "answer": null}', NONE),
    _m("json_refusal_text", '{"answer": "I cannot determine this"}', NONE),
    _m("json_option_text", '{"answer": "Golgi apparatus"}', NONE, ("D", "option_text")),
    _m("json_index_number", '{"answer": 2}', NONE),
    _m(
        "json_reasoning_says_other",
        '{"reasoning": "I first leaned to A, the mitochondrion, but the answer is B.", "answer": "B"}',
        ("B", "json_field"),
    ),
    _m(
        "json_correction_two_objects",
        '```json\n{"answer": "A"}\n```\nActually, mitochondria do not make proteins.\n```json\n{"answer": "B"}\n```',
        ("B", "json_field"),
    ),
    _m("yaml_answer", "```yaml\nreasoning: ribosomes translate mRNA\nanswer: B\n```", ("B", "yaml_field")),
    _m("yaml_final_answer_unfenced", "reasoning: golgi packages proteins\nfinal_answer: D", ("D", "yaml_field")),
    # declared prose
    _m("answer_bold_inline", "After weighing the options, **Answer: (D)**", ("D", "answer_is")),
    _m("final_answer_paren", "Final answer: (C)", ("C", "answer_is")),
    _m("the_answer_is_paren", "The answer is (A).", ("A", "answer_is")),
    _m("correct_option_is", "The correct option is B) Ribosome.", ("B", "answer_is")),
    _m("answer_colon_newline", "Answer:\n\nD", ("D", "answer_is")),
    _m("answer_is_latex", "The answer is $\\text{(C)}$.", ("C", "answer_is")),
    _m("boxed_textbf", "$$\\boxed{\\textbf{(B)}}$$", ("B", "boxed")),
    _m("boxed_two", "It is either $\\boxed{A}$ or $\\boxed{B}$.", HEDGED),
    _m("boxed_option_text", "\\boxed{\\text{Nucleus}}", NONE, ("C", "option_text")),
    _m("answer_is_b_or_c", "The answer is B or C.", HEDGED),
    _m("answer_slash", "Answer: A/D", HEDGED),
    _m("two_declarations_no_cue", "**Answer:** B\n\n**Answer:** C", HEDGED),
    _m("two_declarations_correction", "**Answer:** B\n\nHmm, on second thought:\n\n**Answer:** C", ("C", "answer_is")),
    _m("xml_answer_tag", "Ribosomes translate mRNA.\n<answer>B</answer>", ("B", "xml_tag")),
    _m("xml_answer_tag_option_text", "<answer>Golgi apparatus</answer>", NONE, ("D", "option_text")),
    _m("xml_answer_tag_hedge", "<answer>B or C</answer>", HEDGED),
    _m(
        "think_block_guess_then_final",
        "<think>\nThe answer is A? No, ribosomes make proteins.\n</think>\n\n**Answer: B**",
        ("B", "answer_is"),
    ),
    # two real replies of the embedded SmolLM2-135M (make demo, 2026-11-28): a letter alone on the
    # first line; the article "A" before a counted noun (was read as the letter A)
    _m(
        "real_smollm_letter_first_line",
        "A\n\nTwo-factor authentication requires two separate factors, which are typically a password and a "
        "one-time code. This type of security is often referred to as two-factor authentication, as it requires "
        "two distinct elements to achieve the desired level of security.",
        ("A", "letter_start"),
        choices=(
            "Two passwords of different lengths",
            "Two independent kinds of evidence, such as a password and a one-time code",
            "Logging in from two devices at once",
            "Two administrators approving each login",
        ),
    ),
    _m(
        "real_smollm_article_before_number",
        "A 2 kg object moving at 3 m/s is a classic example of a projectile motion. The kinetic energy of this "
        "object is equal to the mass of the object multiplied by the square of the velocity. Since the object is "
        "moving at 3 m/s, the kinetic energy is 3 * 3",
        NONE,
        choices=("9 J", "6 J", "3 J", "18 J"),
    ),
    # real SmolLM2 replies (routing's self-consistency prompts, make demo 2026-11-28): answers
    # changed without a correction, then repeated; the last one used to win
    _m(
        "real_smollm_changed_then_repeated",
        "The answer is (B)\n\nThe correct answer is (C)\n\nHere's the explanation:\n\nOption (A) refers to "
        "gravitational contraction.\n\nThe correct answer is indeed (C)",
        HEDGED,
    ),
    _m(
        "real_smollm_declares_every_option",
        "A) The signer's private key. The answer is (D) The signer's public key.\n\nExplanation: Step 1: The answer "
        "is (D) The signer's public key. Step 2: The answer is (X) The answer is (C) The answer is (C) The answer is "
        "(B) The answer is (D) The answer is (A) The answer is (A) The answer is (A)",
        HEDGED,
    ),
    _m("letter_first_line_bold", "**B**\n\nRibosomes make proteins.", ("B", "letter_start")),
    _m("letters_listed_one_per_line", "A\nB\nC\nD\nI am not sure.", NONE, ("A", "first_letter")),
    _m("heading_answer_letter", "Ribosomes translate mRNA.\n\n### Answer\n\nB", ("B", "answer_is")),
    _m("heading_final_answer_bold_letter", "### Final Answer\n\n**C**", ("C", "answer_is")),
    _m("heading_answer_article", "### Answer\nA cell organelle that makes proteins: B", NONE, ("B", "first_letter")),
    # a declared letter withdrawn after it, the new letter stated without the word "answer"
    _m("retracted_wait_wrong", "The answer is (A). Wait, that's wrong: it's B.", ("B", "correction")),
    _m(
        "retracted_actually_no_so", "Answer: A\n\nActually, no — mitochondria make ATP, so it's B.", ("B", "correction")
    ),
    _m("retracted_i_meant", "Answer: B. Oops, I meant C.", ("C", "correction")),
    _m(
        "retracted_with_option_text",
        "The answer is (B).\n\nActually, it's (C) Nucleus because DNA lives there.",
        ("C", "correction"),
    ),
    _m("retracted_after_question_mark_dash", "Neither A nor C; the answer is D? No — it's B.", ("B", "correction")),
    _m("retracted_into_hedge", "The answer is B. Wait, it's B or C.", HEDGED),
    _m("retraction_restates_same", "Answer: B\nWait, it's B.", ("B", "answer_is")),
    _m("retraction_names_a_fact", "The answer is B. Wait, it's A that produces ATP, not B.", ("B", "answer_is")),
    _m("retraction_article", "The answer is B. No, it's a trick: the ribosome makes proteins.", ("B", "answer_is")),
    _m("retraction_after_field_ignored", '{"answer": "B"}\nOops, I meant C.', ("B", "json_field")),
    _m("final_answer_refusal", "The question is ambiguous.\n\nFinal answer: none of the above", NONE),
    _m(
        "answer_is_because_other_letters",
        "The answer is B, because A makes ATP and D only packages proteins.",
        ("B", "answer_is"),
    ),
    _m("answer_is_rather_than", "The answer is C rather than B.", ("C", "answer_is")),
    _m(
        "answer_first_then_analysis",
        "Answer: B\n\nA) Mitochondrion — incorrect, it produces ATP.\nB) Ribosome — correct.\n"
        "C) Nucleus — incorrect.\nD) Golgi apparatus — incorrect.",
        ("B", "answer_is"),
    ),
    # no declaration: letters that do and do not count
    _m(
        "conclusion_after_analysis",
        "Let's go through them.\nOption A makes ATP.\nOption B builds proteins from mRNA.\n"
        "Option C stores genetic material.\nOption D packages proteins.\n\nSo B.",
        NONE,
        ("B", "conclusion"),
    ),
    _m(
        "negated_letters_then_one",
        "A is wrong because mitochondria make ATP. C is incorrect: the nucleus stores DNA. "
        "D is not right either. B fits.",
        NONE,
        ("B", "first_letter"),
    ),
    _m(
        "table_verdicts",
        "| Option | Organelle | Verdict |\n|---|---|---|\n| A | Mitochondrion | ✗ |\n| B | Ribosome | ✓ |\n"
        "| C | Nucleus | ✗ |\n| D | Golgi | ✗ |",
        NONE,
        ("B", "first_letter"),
    ),
    _m(
        "table_then_declared",
        "| Option | Verdict |\n|---|---|\n| A | wrong |\n| B | right |\n| C | wrong |\n| D | wrong |\n\n"
        "**Final answer: B**",
        ("B", "answer_is"),
    ),
    _m("letter_start_reply", "B) Ribosome. Ribosomes read mRNA and link amino acids.", ("B", "letter_start")),
    _m("letter_start_negated", "(A) is not correct, because mitochondria make ATP.", NONE),
    _m("lone_bold", "**C**", ("C", "lone_letter")),
    _m("option_paren_single", "After considering everything, I'd go with option (D).", ("D", "paren_letter")),
    _m("paren_after_option_text", "Protein synthesis happens at the ribosome (B).", ("B", "paren_letter")),
    _m(
        "function_notation",
        "The probability P(A) = 0.3 and P(B) = 0.5, so P(A ∪ B) ≤ 0.8.",
        NONE,
        choices=("0.15", "0.3", "0.5", "0.8"),
    ),
    _m(
        "vitamin_notation",
        "Scurvy is caused by a lack of vitamin C.",
        NONE,
        ("C", "option_text"),
        choices=("Vitamin A", "Vitamin B12", "Vitamin C", "Vitamin D"),
    ),
    _m(
        "code_letters",
        "In Python, `A = B` binds a name; the list `C[0]` is not copied. Neither statement copies data.",
        NONE,
    ),
    _m("article_a_only", "A ribosome is where proteins are made.", NONE, ("B", "option_text")),
    _m("hedge_either", "It could be either B or D; I can't tell without the figure.", NONE, HEDGED),
    _m("refusal", "I'm sorry, I can't answer questions about this topic.", NONE),
    _m("empty", "", NONE),
    _m("both_plausible", "Both (A) and (C) look plausible to me.", NONE, HEDGED),
    _m("cpp_and_b12", "In C++ you would model B12 deficiency with a class.", NONE),
    _m("answer_must_be", "Only one organelle translates mRNA, so the answer must be B.", ("B", "answer_is")),
    _m("answer_definitely", "The answer is definitely D.", ("D", "answer_is")),
    _m("answer_then_negated_other", "The answer is B and C is wrong.", ("B", "answer_is")),
    _m("answer_bold_then_not", "The answer is **B** (Ribosome), not C.", ("B", "answer_is")),
    _m("answer_paren_not_others", "Therefore the answer is (C), not (A) or (B).", ("C", "answer_is")),
    _m("choice_here_would_be", "Weighing all four, the right choice here would be (D).", ("D", "paren_letter")),
    _m("answer_label_option_text_paren", "Answer: The ribosome (B) is responsible.", ("B", "paren_letter")),
    _m(
        "option_list_then_so",
        "Let me analyze.\n\nA. Mitochondrion - makes ATP\nB. Ribosome - makes proteins\nC. Nucleus - DNA\n"
        "D. Golgi - packaging\n\nThe ribosome makes proteins, so B is the answer.",
        NONE,
        ("B", "conclusion"),
    ),
    _m(
        "incorrect_then_correct",
        "Option A is incorrect because it makes ATP. Option C is correct.",
        NONE,
        ("C", "first_letter"),
    ),
    _m(
        "option_list_with_verdicts",
        "Let me work out the answer:\nA) Mitochondrion - makes ATP, incorrect\nB) Ribosome - correct\n"
        "C) Nucleus - incorrect\nD) Golgi - incorrect",
        NONE,
        ("B", "first_letter"),
    ),
    _m(
        "each_option_colon_then_declared",
        "Let's evaluate each option:\nA) Mitochondrion - makes ATP\nB) Ribosome - makes proteins\n"
        "C) Nucleus - DNA\nD) Golgi - packaging\n\nThe ribosome is the site, so the answer is B.",
        ("B", "answer_is"),
    ),
    _m("answer_colon_option_line", "Answer:\nB) Ribosome", ("B", "answer_is")),
    _m(
        "bold_option_analysis_final_line",
        "Let me analyze this step by step.\n\n**Evaluating each option:**\n\n"
        "**(A) Mitochondrion** - produces ATP; it has its own ribosomes but is not the main site.\n\n"
        "**(B) Ribosome** - translates mRNA into protein.\n\n"
        "**(C) Nucleus** - transcription, not translation.\n\n"
        "**(D) Golgi apparatus** - packages proteins after synthesis.\n\n(B)",
        NONE,
        ("B", "conclusion"),
    ),
    _m(
        "truncated_json",
        '{"reasoning": "Ribosomes translate mRNA into polypeptides", "answer": "B',
        ("B", "json_field"),
    ),
    # self-corrections in prose: the letter after "wait"/"actually" is the conclusion
    _m(
        "self_correction_wait_its",
        "Proteins are assembled where mRNA is translated. I would choose A. Wait, actually, "
        "re-reading the question, mitochondria only make their own few proteins, so it's B.",
        NONE,
        ("B", "conclusion"),
    ),
    _m(
        "self_correction_actually_no",
        "At first glance D, since the Golgi handles proteins. Actually no, it's B: the Golgi only "
        "modifies and packages them.",
        NONE,
        ("B", "conclusion"),
    ),
]

# =============================================================================================
# extraction audit (findings A–L): the audit's replies and variants written for these rules
# =============================================================================================

GSM_AUDIT = [
    # A: \text{} inside \boxed keeps its text, only the command goes
    _g(
        "audit_g11_boxed_text_number",
        "Janet sells $16 - 3 - 4 = 9$ eggs at \\$2 each, so she earns $9 \\times 2 = 18$ dollars.\n\n"
        "\\[\n\\boxed{\\text{18}}\n\\]",
        ("18", "boxed"),
    ),
    _g(
        "audit_g13_boxed_text_dollar",
        "So she earns 9 × 2 = 18 dollars.\n\n**Answer:** $\\boxed{\\text{\\$18}}$",
        ("18", "boxed"),
    ),
    _g(
        "boxed_text_number_and_unit",
        "Laying 6 rows of 6 tiles covers the floor: $\\boxed{\\text{36 tiles}}$",
        ("36", "boxed"),
    ),
    _g("boxed_text_sentence", "$$\\boxed{\\text{The bus carries 45 people}}$$", ("45", "boxed")),
    _g("boxed_mathrm_thousands", "Total: $\\boxed{\\mathrm{1{,}250}}$", ("1250", "boxed")),
    # C: "#### 1. ..." / "#### 2) ..." with words after is a numbered heading, not an answer
    _g(
        "audit_g25_numbered_h4_headings",
        "#### 1. Eggs left after breakfast and baking\n16 − 3 − 4 = 9 eggs\n\n#### 2. Money from sales\n"
        "9 × $2 = $18\n\nJanet makes **$18** per day.",
        NONE,
        ("18", "last_number"),
    ),
    _g(
        "audit_g26_numbered_h4_then_hash",
        "#### 1. Find the remaining eggs\n16 − 3 − 4 = 9\n\n#### 2. Multiply by the price\n9 × 2 = 18\n\n#### 18",
        ("18", "hash"),
    ),
    _g(
        "numbered_h4_paren_then_hash",
        "#### 1) Cost of the pens\n4 × $3 = $12\n\n#### 2) Add the paper\n$12 + $5 = $17\n\n#### 17",
        ("17", "hash"),
    ),
    _g(
        "numbered_h4_bold_no_answer",
        "#### **1. Pages per day**\nShe reads 15 pages.\n#### **2. Pages in a week**\n15 × 7 = 105 pages.",
        NONE,
        ("105", "last_number"),
    ),
    # B: an "Answer:" label opening a worked solution declares nothing by itself
    _g(
        "audit_g23_answer_label_then_working",
        "**Answer:**\n\n3 friends each paid $12 for tickets and $5 for popcorn. Each spent 12 + 5 = $17, so together "
        "they spent 3 × 17 = $51.",
        NONE,
        ("51", "last_number"),
    ),
    _g(
        "audit_g24_answer_label_newline_working",
        "Answer:\n2 adults and 3 children go to the zoo. Adult tickets cost 2 × $15 = $30 and children's tickets "
        "cost 3 × $8 = $24. In total they pay $54.",
        NONE,
        ("54", "last_number"),
    ),
    _g(
        "audit_g20_answer_label_calculation_then_hash",
        "Answer: 16 - 3 - 4 = 9 eggs are left each day.\n9 * 2 = 18 dollars.\n#### 18",
        ("18", "hash"),
    ),
    _g(
        "audit_g22_answer_label_calculation_same_line",
        "Answer: 48 / 2 = 24 clips were sold in May. Altogether 48 + 24 = 72 clips in April and May.\n#### 72",
        ("72", "hash"),
    ),
    _g(
        "answer_label_bold_then_givens",
        "**Answer:**\n\n4 boxes hold 12 pencils each, so there are 4 × 12 = 48 pencils; 6 are broken, leaving 42.",
        NONE,
        ("42", "last_number"),
    ),
    _g(
        "answer_label_calculation_continues_then_hash",
        "Answer: 5 × 8 = 40 apples were picked on Monday.\nOn Tuesday they picked 15 more: 40 + 15 = 55 apples.\n#### 55",
        ("55", "hash"),
    ),
    _g(
        "here_is_the_answer_then_working",
        "Here is the answer: 4 boxes hold 6 eggs each, so 4 × 6 = 24 eggs.",
        NONE,
        ("24", "last_number"),
    ),
    # K: a line "A: ..." is an answer prefix only when it states a value (and is no item of "A:", "B:")
    _g(
        "audit_g60_qa_prefix_sentence",
        "Q: How much does Janet make?\nA: 9 eggs are left after breakfast and baking, and at $2 each she makes $18.",
        NONE,
        ("18", "last_number"),
    ),
    _g(
        "audit_g61_labels_a_b",
        "Let the boxes be A and B.\nA: 12 apples\nB: 15 apples\nTogether: 12 + 15 = 27 apples.",
        NONE,
        ("27", "last_number"),
    ),
    _g(
        "qa_prefix_working",
        "Q: How many marbles are left?\nA: 30 marbles minus the 12 he gave away leaves 18 marbles.",
        NONE,
        ("18", "last_number"),
    ),
    _g(
        "labels_team_a_b",
        "Team A scored more than team B.\nA: 14 points\nB: 9 points\nThe difference is 14 - 9 = 5 points.",
        NONE,
        ("5", "last_number"),
    ),
    # L: struck-through text is withdrawn; an unevaluated expression is no number; "12 000"
    _g("audit_g33_strikethrough", "9 eggs × $2 = $18\n\n**Answer: ~~$16~~ $18**", ("18", "answer_is")),
    _g("strikethrough_after_hash", "Total after the discount: $40.\n\n#### ~~45~~ 40", ("40", "hash")),
    _g("strikethrough_in_sentence", "The answer is ~~24~~ 26 cookies.", ("26", "answer_is")),
    _g(
        "audit_g56_json_expression",
        '{"explanation": "She sells the leftover eggs.", "answer": "(16 - 3 - 4) * 2"}',
        NONE,
    ),
    _g("json_expression_division", '{"answer": "48 / 2 + 48"}', NONE),
    _g("answer_is_expression", "The answer is 15 × 4 + 3.", NONE),
    _g(
        "audit_g43_answer_space_thousands",
        "Over 10 years he saves 1 200 × 10 = 12 000 euros.\n\nThe answer is 12 000.",
        ("12000", "answer_is"),
    ),
    _g("answer_space_millions", "So the final answer is 1 500 000 dollars.", ("1500000", "answer_is")),
    _g("answer_label_space_thousands", "Answer: 250 000", ("250000", "answer_is")),
    # D: an answer someone might give is not the reply's declaration
    _g(
        "audit_g34_you_might_think",
        "You might think the answer is 20, since 16 + 4 = 20, but the 4 eggs are used, not bought. She sells "
        "16 − 3 − 4 = 9 eggs for 9 × $2 = $18.",
        NONE,
        ("18", "last_number"),
    ),
    _g(
        "students_would_say",
        "Many students would say the answer is 32, but the muffins use 4 eggs. She sells 9 eggs for $18.",
        NONE,
        ("18", "last_number"),
    ),
    _g(
        "tempting_to_conclude",
        "It's tempting to conclude the answer is 12 here; the real total is 12 + 8 = 20 apples.",
        NONE,
        ("20", "last_number"),
    ),
]

MMLU_AUDIT_CELL = ("Mitochondria", "Ribosome", "Golgi apparatus", "Lysosome")

MMLU_AUDIT = [
    # E: a reply that opens by going through the options answers with none of them by that alone
    _m(
        "audit_m13_verdict_list",
        "A) Incorrect. Mitochondria produce ATP.\nB) Correct. Ribosomes synthesize proteins.\nC) Incorrect. The Golgi "
        "packages proteins.\nD) Incorrect. Lysosomes digest material.",
        NONE,
        ("B", "first_letter"),
        choices=MMLU_AUDIT_CELL,
    ),
    _m(
        "audit_m14_verdict_list_dot",
        "A. Incorrect – mitochondria are the site of cellular respiration.\nB. Correct – ribosomes are where "
        "translation happens.\nC. Incorrect – the Golgi modifies proteins.\nD. Incorrect – lysosomes break down "
        "waste.",
        NONE,
        ("B", "first_letter"),
        choices=MMLU_AUDIT_CELL,
    ),
    _m(
        "audit_m15_verdict_list_marks",
        "**A) Mitochondria** – ❌ produces ATP\n**B) Ribosome** – ✅ protein synthesis\n**C) Golgi apparatus** – ❌ "
        "packaging\n**D) Lysosome** – ❌ digestion",
        NONE,
        ("B", "first_letter"),
        choices=MMLU_AUDIT_CELL,
    ),
    _m(
        "audit_m73_yes_no_list",
        "A: No – energy production.\nB: Yes – translation of mRNA.\nC: No – packaging.\nD: No – digestion.",
        NONE,
        ("B", "first_letter"),
        choices=MMLU_AUDIT_CELL,
    ),
    _m(
        "audit_m17_restated_options_then_text",
        "A) Mitochondria\nB) Ribosome\nC) Golgi apparatus\nD) Lysosome\n\nProtein synthesis happens on ribosomes, so "
        "the ribosome is the organelle in question.",
        NONE,
        ("B", "option_text"),
        choices=MMLU_AUDIT_CELL,
    ),
    _m(
        "audit_m18_restated_options_then_fits",
        "A) Mitochondria\nB) Ribosome\nC) Golgi apparatus\nD) Lysosome\n\nProteins are made on ribosomes. Option B "
        "fits.",
        NONE,
        ("B", "conclusion"),
        choices=MMLU_AUDIT_CELL,
    ),
    _m(
        "audit_m33_inline_enumeration",
        "(A) produces ATP, (B) synthesizes proteins, (C) packages proteins, (D) digests waste. The question asks "
        "about synthesis, which matches (B).",
        NONE,
        ("B", "conclusion"),
        choices=MMLU_AUDIT_CELL,
    ),
    _m(
        "verdict_list_wrong_right",
        "A) Wrong – the mitochondrion makes ATP.\nB) Right – ribosomes translate mRNA.\nC) Wrong – the nucleus "
        "stores DNA.\nD) Wrong – the Golgi packages proteins.",
        NONE,
        ("B", "first_letter"),
    ),
    _m(
        "yes_no_list_lowercase",
        "A: no, that is energy.\nB: yes, translation.\nC: no.\nD: no.",
        NONE,
        ("B", "first_letter"),
    ),
    _m(
        "restated_options_then_prose",
        "A) Mitochondrion\nB) Ribosome\nC) Nucleus\nD) Golgi apparatus\n\nTranslation of mRNA into protein takes "
        "place at the ribosome.",
        NONE,
        ("B", "option_text"),
    ),
    # F: "each answer:" then an option list separated by blank lines is no declaration of A
    _m(
        "audit_m19_each_answer_blank_lines",
        "Let me go through each answer:\n\nA. Mitochondria – these produce ATP, not proteins.\n\nB. Ribosome – the "
        "site of translation; this is what we want.\n\nC. Golgi apparatus – modifies and packages proteins.\n\n"
        "D. Lysosome – digests cellular waste.\n\nSo the ribosome it is.",
        NONE,
        ("B", "option_text"),
        choices=MMLU_AUDIT_CELL,
    ),
    _m(
        "audit_m20_each_answer_bold_conclusion",
        "Let's evaluate each answer:\n\n**A. Mitochondria**: powerhouse of the cell, makes ATP.\n\n**B. Ribosome**: "
        "translates mRNA — correct.\n\n**C. Golgi apparatus**: packaging.\n\n**D. Lysosome**: digestion.\n\n"
        "**Conclusion:** B",
        NONE,
        ("B", "conclusion"),
        choices=MMLU_AUDIT_CELL,
    ),
    _m(
        "audit_m68_the_answer_blank_list",
        "Here's the answer:\n\nA) Mitochondria — no, energy.\n\nB) Ribosome — yes.\n\nC) Golgi — no.\n\n"
        "D) Lysosome — no.",
        NONE,
        ("B", "first_letter"),
        choices=MMLU_AUDIT_CELL,
    ),
    _m(
        "each_answer_blank_lines_verdict",
        "Let me check each answer:\n\nA. Mitochondrion – ATP.\n\nB. Ribosome – correct, it translates mRNA.\n\n"
        "C. Nucleus – DNA storage.\n\nD. Golgi apparatus – packaging.",
        NONE,
        ("B", "conclusion"),
    ),
    _m(
        "my_answer_paren_list_yes_no",
        "Here is my answer:\n\n(A) Mitochondrion: no\n\n(B) Ribosome: yes\n\n(C) Nucleus: no\n\n(D) Golgi apparatus: no",
        ("B", "paren_letter"),
    ),
    # G: options named with their letters while going through them are not the answer
    _m(
        "audit_m35_named_options_then_letter",
        "Mitochondria (A) are for energy and lysosomes (D) for digestion. Ribosome — B it is.",
        NONE,
        ("B", "first_letter"),
        choices=MMLU_AUDIT_CELL,
    ),
    _m(
        "audit_m60_named_options_eliminated",
        "The question asks which organelle synthesizes proteins. Mitochondria (A) make ATP; the Golgi (C) packages; "
        "lysosomes (D) digest. That leaves the ribosome.",
        NONE,
        choices=MMLU_AUDIT_CELL,
    ),
    _m(
        "named_options_then_so",
        "The nucleus (C) stores DNA and the Golgi (D) packages proteins, so B.",
        NONE,
        ("B", "first_letter"),
    ),
    _m("named_options_no_letter", "Mitochondrion (A) makes ATP; nucleus (C) holds DNA. Ribosome it is.", NONE),
    # H: units and names are no answer letters
    _m(
        "audit_m22_degrees_celsius",
        "At high altitude the air pressure is lower, so water boils below 100 °C. That matches option B.",
        NONE,
        ("B", "first_letter"),
        choices=("It rises above 100 °C", "It falls below 100 °C", "It stays at 100 °C", "It depends on the container"),
    ),
    _m(
        "audit_m23_amperes",
        "By Ohm's law I = V/R = 12/6 = 2 A, matching option D.",
        NONE,
        ("D", "first_letter"),
        choices=("0.5 A", "72 A", "6 A", "2 A"),
    ),
    _m(
        "audit_m24_b_cells",
        "Antibodies are secreted by plasma cells, which differentiate from activated B cells. That corresponds to D.",
        NONE,
        ("D", "first_letter"),
        choices=("T helper cells", "Natural killer cells", "Macrophages", "Plasma cells"),
    ),
    _m(
        "audit_m27_coulombs",
        "The charge is Q = It = 2 × 3 = 6 C. Of the options, only D matches.",
        NONE,
        ("D", "first_letter"),
        choices=("2 C", "3 C", "5 C", "6 C"),
    ),
    _m(
        "amperes_then_choice",
        "The current is 3 A, which is option C.",
        NONE,
        ("C", "first_letter"),
        choices=("1 A", "2 A", "3 A", "4 A"),
    ),
    _m(
        "degrees_then_choice",
        "Water freezes at 0 °C at sea level; that is choice D.",
        NONE,
        ("D", "first_letter"),
        choices=("100 °C", "50 °C", "37 °C", "0 °C"),
    ),
    _m(
        "memory_b_cells",
        "Memory B cells respond faster on a second exposure, as described in D.",
        NONE,
        ("D", "first_letter"),
        choices=("Innate immunity", "Passive immunity", "Herd immunity", "Immunological memory"),
    ),
    # I: conclusions said in other words ("fits best", "I'm going to say", "actually, no:")
    _m(
        "audit_m34_fits_best",
        "A makes ATP and C packages proteins. D digests waste. B fits best.",
        NONE,
        ("B", "conclusion"),
        choices=MMLU_AUDIT_CELL,
    ),
    _m(
        "audit_m37_going_to_say",
        "Considering A and D are clearly unrelated, and C only modifies proteins, I'm going to say B.",
        NONE,
        ("B", "conclusion"),
        choices=MMLU_AUDIT_CELL,
    ),
    _m(
        "audit_m32_actually_no",
        "My first instinct is A... actually, no: B.",
        NONE,
        ("B", "conclusion"),
        choices=MMLU_AUDIT_CELL,
    ),
    _m(
        "audit_m67_declared_then_yes_no_list",
        "The answer is:\n\nA) Mitochondria – no\nB) Ribosome – yes\nC) Golgi – no\nD) Lysosome – no",
        NONE,
        ("B", "first_letter"),
        choices=MMLU_AUDIT_CELL,
    ),
    _m("option_fits", "The nucleus, C, stores DNA. Option B fits.", NONE, ("B", "conclusion")),
    _m("id_say", "C only stores DNA; D packages proteins. I'd say B.", NONE, ("B", "conclusion")),
    _m("wait_no", "First thought: D. Wait, no: B.", NONE, ("B", "conclusion")),
    # J: a declared letter followed by a dismissed option is no hedge
    _m(
        "audit_m69_answer_and_distractor",
        "The correct answer is C (Paris), and option A (London) is the capital of the UK.",
        ("C", "answer_is"),
        choices=("London", "Berlin", "Paris", "Madrid"),
    ),
    _m(
        "audit_m70_answer_and_trap",
        "The answer is **C**, and **A** is a common trap here.",
        ("C", "answer_is"),
        choices=("London", "Berlin", "Paris", "Madrid"),
    ),
    _m(
        "answer_and_option_only_packages",
        "The correct answer is B (Ribosome), and option D (Golgi apparatus) only packages proteins.",
        ("B", "answer_is"),
    ),
    _m("answer_bold_and_other_where", "The answer is **B**, and **A** is where ATP is made.", ("B", "answer_is")),
    # D: an answer someone might give is not the reply's declaration
    _m(
        "audit_m28_tempting",
        "It's tempting to say the answer is A, since mitochondria are so important, but they make ATP, not proteins. "
        "The real site of protein synthesis is the ribosome, option B.",
        NONE,
        ("B", "first_letter"),
        choices=MMLU_AUDIT_CELL,
    ),
    _m(
        "one_might_think",
        "One might think the answer is D, because the Golgi handles proteins; it only packages them. Ribosome, "
        "option B.",
        NONE,
        ("B", "first_letter"),
    ),
    # L (MMLU too): struck-through text is withdrawn
    _m("strikethrough_letter", "**Answer:** ~~C~~ B", ("B", "answer_is")),
]


def _corpus() -> list[Case]:
    return _gsm_composed() + _mmlu_composed() + GSM_HAND + MMLU_HAND + GSM_AUDIT + MMLU_AUDIT


CORPUS: list[Case] = _corpus()
BUILDERS: dict[str, Callable[[], list[Case]]] = {"gsm8k": _gsm_composed, "mmlu": _mmlu_composed}
