"""Replies shaped like those of strong chat models to GSM8K-style problems (issue 36), each with
its adjudicated answer.

Strong models (GPT-4-, Claude- and Llama-style chain of thought) reason in markdown steps or
LaTeX and end with a concluding sentence that often restates numbers of the question after the
answer ("Kylar needs to pay $64 for the 16 glasses."), a bold answer, ``\\boxed{}``, "The final
answer is: ...", "#### N", or they decline ("The problem doesn't say how many ..."). Two parts:

* **composed**: worked solutions of problems written for this corpus, each combined with the ways
  such replies end; the adjudicated answer is the problem's answer whatever the ending restates.
* **hand-written**: single replies for refusals, equal forms ("50% or 1/2"), clock times, units,
  currency, commas, negative numbers, decimals, fractions, percentages and hedges.

``answer`` is what a careful reader credits: the number the reply commits to, ``None`` when it
commits to none (it declines, hedges between two answers, or states a clock time that is not on
the hour). ``declines`` marks replies that say the problem cannot be answered: no mode may credit
them with an answer. All texts were written for this project; none is copied from a model or a
data set.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Reply:
    """One reply and its adjudicated answer."""

    id: str
    text: str
    answer: str | None  # the canonical number a careful reader credits; None: no answer
    declines: bool = False  # the reply says the question cannot be answered


@dataclass(frozen=True)
class Solved:
    key: str
    body: str  # the worked solution, ending before any concluding sentence
    answer: str  # canonical
    shown: str  # as the conclusion writes it ("$64")
    conclusion: str  # the concluding sentence, restating numbers of the question after the answer


SOLVED = [
    Solved(
        "glasses",
        "To find the total cost, I'll split the glasses into full-price and discounted ones.\n\n"
        "1. **Full-price glasses:** Every second glass is discounted, so half of the 16 glasses are full price:\n"
        "   \\( 16 \\div 2 = 8 \\) glasses at $5 each: \\( 8 \\times 5 = 40 \\) dollars.\n"
        "2. **Discounted glasses:** The other 8 cost 60% of $5: \\( 0.6 \\times 5 = 3 \\) dollars each, so\n"
        "   \\( 8 \\times 3 = 24 \\) dollars.\n"
        "3. **Total:** \\( 40 + 24 = 64 \\) dollars.",
        "64",
        "$64",
        "Kylar needs to pay $64 for the 16 glasses.",
    ),
    Solved(
        "hens",
        "Let me work through this step by step.\n\n"
        "Maria's hens lay 20 eggs per day. She uses 5 of them for breakfast and baking, which leaves\n"
        "20 - 5 = 15 eggs to sell.\n\n"
        "She sells each egg for $3, so her daily income is 15 × $3 = $45.",
        "45",
        "$45",
        "Maria makes $45 every day by selling 15 of the 20 eggs her hens lay.",
    ),
    Solved(
        "download",
        "## Step 1: Time until the restart\n"
        "The download stops halfway, after 240 / 2 = 120 GB. At 4 GB per minute that takes 120 / 4 = 30 minutes.\n\n"
        "## Step 2: The restart\n"
        "The restart itself takes 20 minutes.\n\n"
        "## Step 3: Downloading again from the beginning\n"
        "The whole file now downloads again: 240 / 4 = 60 minutes.\n\n"
        "## Step 4: Total time\n"
        "30 + 20 + 60 = 110 minutes.",
        "110",
        "110",
        "It takes 110 minutes in total to download the 240 GB file.",
    ),
    Solved(
        "cakes",
        "On Monday the bakery sold 36 cakes. On Tuesday it sold a third as many:\n\n"
        "$$\\frac{36}{3} = 12$$\n\n"
        "Adding the two days together:\n\n"
        "$$36 + 12 = 48$$",
        "48",
        "48",
        "The bakery sold 48 cakes over the 2 days.",
    ),
    Solved(
        "ages",
        "Tom's sister is 4 years old and Tom is 3 times as old, so Tom is 3 × 4 = 12 years old.\n\n"
        "In 5 years his sister will be 4 + 5 = 9, and Tom will be 12 + 5 = 17.",
        "17",
        "17",
        "In 5 years, Tom will be 17 years old, 8 years older than his 9-year-old sister.",
    ),
    Solved(
        "savings",
        "**Savings:** Lena saves $35 a week for 6 weeks: $35 × 6 = $210.\n\n"
        "**Spending:** She spends $80 on a jacket, so $210 - $80 = $130.",
        "130",
        "$130",
        "Lena has $130 left out of the $210 she saved in 6 weeks.",
    ),
    Solved(
        "pages",
        "Sam's book has 300 pages and he has already read 100, so 300 - 100 = 200 pages remain.\n"
        "He reads 25 pages a day: 200 ÷ 25 = 8.",
        "8",
        "8",
        "Sam needs 8 more days to finish the remaining 200 pages.",
    ),
    Solved(
        "students",
        "There are 80 students and 20% of them failed.\n\n"
        "- Students who failed: 80 × 0.20 = 16\n"
        "- Students who passed: 80 - 16 = 64",
        "64",
        "64",
        "That means 64 students passed, which is 80% of the class of 80.",
    ),
    Solved(
        "temperature",
        "The temperature starts at 5°C and drops 3 degrees every hour for 7 hours.\n\n"
        "Total drop: 3 × 7 = 21 degrees.\n\n"
        "Final temperature: 5 - 21 = -16°C.",
        "-16",
        "-16°C",
        "The temperature after 7 hours is -16°C, a drop of 21 degrees from the starting 5°C.",
    ),
    Solved(
        "notebooks",
        "Priya buys 3 notebooks at $2.75 each and one pen for $1.40.\n\n"
        "Notebooks: 3 × $2.75 = $8.25\n"
        "Pen: $1.40\n"
        "Total: $8.25 + $1.40 = $9.65",
        "9.65",
        "$9.65",
        "Priya spends $9.65 on the 3 notebooks and the pen.",
    ),
    Solved(
        "pizza",
        "The pizza has 8 slices. Ben eats 3 and gives 2 to his sister, so 8 - 3 - 2 = 3 slices are left.\n\n"
        "As a fraction of the pizza: \\( \\frac{3}{8} = 0.375 \\).",
        "0.375",
        "0.375",
        "So 0.375 of the pizza is left after eating 3 of the 8 slices and giving away 2.",
    ),
    Solved(
        "widgets",
        "**Step 1 – Widgets made in 30 days:** 1,250 × 30 = 37,500 widgets.\n\n"
        "**Step 2 – Revenue:** each widget sells for $12, so 37,500 × $12 = $450,000.",
        "450000",
        "$450,000",
        "The company earns $450,000 from the 37,500 widgets it makes in 30 days.",
    ),
    Solved(
        "arrival",
        "She leaves at 9:00 am and the drive takes 5 hours.\n\n9 + 5 = 14, and 14:00 is 2:00 pm.",
        "2",
        "2:00 pm",
        "She arrives at 2:00 pm after driving for 5 hours from 9:00 am.",
    ),
    Solved(
        "marathon",
        "Each of the 3 movies lasts 50 minutes, so together they last 3 × 50 = 150 minutes.",
        "150",
        "150",
        "The movie marathon lasts 150 minutes (2 hours and 30 minutes).",
    ),
    Solved(
        "change",
        "Ben buys 3 items at $8.50 each: 3 × $8.50 = $25.50.\n\n"
        "He pays with a $50 bill, so his change is $50 - $25.50 = $24.50.",
        "24.5",
        "$24.50",
        "Ben gets $24.50 in change from his $50 bill.",
    ),
    Solved(
        "fuel",
        "The car uses 8 liters for every 100 km. The trip is 350 km, which is 350 / 100 = 3.5 times 100 km.\n\n"
        "Fuel needed: 3.5 × 8 = 28 liters.",
        "28",
        "28",
        "The car needs 28 liters of fuel for the 350 km trip.",
    ),
    Solved(
        "buses",
        "Each bus holds 40 students and there are 130 students.\n\n"
        "130 ÷ 40 = 3.25, and since we can't have a fraction of a bus, we round up to 4.",
        "4",
        "4",
        "The school needs 4 buses to carry all 130 students.",
    ),
    Solved(
        "price_rise",
        "The price went from $40 to $50, an increase of $50 - $40 = $10.\n\n"
        "As a percentage of the original price: \\( \\frac{10}{40} \\times 100 = 25 \\).",
        "25",
        "25%",
        "The price increased by 25% from the original $40.",
    ),
    Solved(
        "painters",
        "Three workers need 12 days, so the job takes 3 × 12 = 36 worker-days.\n\nWith 4 workers: 36 ÷ 4 = 9 days.",
        "9",
        "9",
        "It would take 4 workers 9 days to paint the house.",
    ),
    Solved(
        "marbles",
        "Sam has 9 marbles. Lily has 14 more than Sam: 9 + 14 = 23.\n\nJake has twice as many as Lily: 2 × 23 = 46.",
        "46",
        "46",
        "Jake has 46 marbles, twice as many as Lily's 23.",
    ),
    Solved(
        "boxes",
        "Each box weighs 2.5 kg and there are 12 boxes: 12 × 2.5 = 30 kg.",
        "30",
        "30 kg",
        "The 12 boxes weigh 30 kg together, at 2.5 kg each.",
    ),
    Solved(
        "average",
        "Her four scores are 85, 90, 78 and 87.\n\nSum: 85 + 90 + 78 + 87 = 340\n\nAverage: 340 ÷ 4 = 85",
        "85",
        "85",
        "Her average score across the 4 tests is 85.",
    ),
    Solved(
        "dozens",
        "She buys 3 dozen eggs, which is 3 × 12 = 36 eggs. She uses 14 of them for baking: 36 - 14 = 22.",
        "22",
        "22",
        "She has 22 eggs left from the 3 dozen she bought.",
    ),
    Solved(
        "debt",
        "Carlos starts with $120 in his account and pays a $165 bill.\n\n120 - 165 = -45",
        "-45",
        "-$45",
        "His balance is -$45 after paying the $165 bill with $120 in the account.",
    ),
    Solved(
        "pizza_split",
        "The order is 5 pizzas at $12 each: 5 × 12 = 60 dollars. Split among 4 friends: 60 / 4 = 15.",
        "15",
        "$15",
        "Each of the 4 friends pays $15 for the 5 pizzas.",
    ),
    Solved(
        "garden",
        "The garden is 12 m long and 7 m wide.\n\nPerimeter: 2 × (12 + 7) = 2 × 19 = 38 m.",
        "38",
        "38 m",
        "Tina needs 38 m of fence to go around the 12 m by 7 m garden.",
    ),
]


def _lower_first(s: str) -> str:
    return s[0].lower() + s[1:]


def _composed() -> list[Reply]:
    out = []
    for p in SOLVED:
        a, body, concl = p.answer, p.body, p.conclusion
        bolded = concl.replace(p.shown, f"**{p.shown}**", 1)
        endings = {
            "restated": f"{body}\n\n{concl}",
            "therefore": f"{body}\n\nTherefore, {_lower_first(concl)}",
            "so_inline": f"{body}\nSo, {_lower_first(concl)}",
            "bold_answer": f"{body}\n\n{bolded}",
            "bold_sentence": f"{body}\n\n**{concl}**",
            "trailing_courtesy": f"{body}\n\n{concl}\n\nLet me know if you'd like me to explain any step in more detail!",
            "answer_is_then_restated": f"{body}\n\nThe answer is {p.shown}. {concl}",
            "hash": f"{body}\n\n{concl}\n#### {a}",
            "boxed_llama": f"{body}\n\n{concl}\n\nThe final answer is: $\\boxed{{{a}}}$",
            "final_heading": f"{body}\n\n### Final Answer\n\n{concl}",
            "final_bold_label": f"{body}\n\n**Final Answer:** {p.shown}",
        }
        out.extend(Reply(f"strong/{p.key}/{name}", text, a) for name, text in endings.items())
    return out


def _r(key: str, text: str, answer: str | None, declines: bool = False) -> Reply:
    return Reply(f"strong/hand/{key}", text, answer, declines)


HAND = [
    # --- replies that decline to answer: never credited, whatever numbers they mention ----------
    _r(
        "sorry_cannot",
        "I'm sorry, but this problem can't be solved as stated: it gives the price of 3 apples ($2.40) "
        "but never says how many apples Sarah buys.",
        None,
        True,
    ),
    _r(
        "doesnt_say",
        "We know the jar held 24 cookies and that 6 friends shared them.\n\nThe problem doesn't say how many "
        "cookies were eaten, so the number left cannot be determined.",
        None,
        True,
    ),
    _r(
        "not_enough_information",
        "**Step 1:** The train leaves at 3 pm and travels 120 miles.\n\n"
        "**Step 2:** To find the arrival time we would need the train's speed, which is not given.\n\n"
        "There is not enough information to answer the question.",
        None,
        True,
    ),
    _r(
        "final_answer_label_cannot",
        "The recipe needs 2 cups of sugar per batch and 3 cups of flour per batch.\n\n"
        "**Final Answer:** Cannot be determined (the question gives 2 ingredients but not the number of batches).",
        None,
        True,
    ),
    _r(
        "json_insufficient",
        '{"reasoning": "There are 12 boxes, but the size of each box is never given.", '
        '"answer": "insufficient information: 12 boxes of unknown size"}',
        None,
        True,
    ),
    _r(
        "boxed_not_enough",
        "The tank holds 500 liters and drains at an unknown rate, so the time to empty it depends on that rate.\n\n"
        "$\\boxed{\\text{Not enough information}}$",
        None,
        True,
    ),
    _r(
        "boxed_cannot_with_number",
        "The two trains are 300 miles apart but only one speed (60 mph) is given.\n\n"
        "$\\boxed{\\text{Cannot be determined with 1 of the 2 speeds}}$",
        None,
        True,
    ),
    _r(
        "hash_cannot",
        "She has 5 red and some blue marbles; the number of blue marbles is never stated.\n#### Cannot be determined",
        None,
        True,
    ),
    _r(
        "answer_cannot_since",
        "The answer cannot be determined from the given information, since we only know that 5 of the 12 "
        "puppies are brown.",
        None,
        True,
    ),
    _r(
        "ambiguous_no_single",
        "This question is ambiguous: \"twice as many\" could refer to Tom's 8 marbles or Ann's 6 marbles, "
        "which gives 16 or 12. There is no single answer.",
        None,
        True,
    ),
    _r(
        "llama_insufficient",
        "## Step 1: Identify the known quantities\nThe bag has 10 red balls and 3 times as many green balls.\n\n"
        "## Step 2: Identify what is asked\nWe are asked for the number of blue balls.\n\n"
        "## Step 3: Check the information\nThe problem does not provide enough information to determine the "
        "number of blue balls.\n\nThe final answer is: $\\boxed{\\text{Insufficient information}}$",
        None,
        True,
    ),
    _r(
        "unable_conditional",
        "Unfortunately, I'm unable to solve this problem because the speed of the second train is never given. "
        "If it were 60 mph, they would meet after 2 hours.",
        None,
        True,
    ),
    _r(
        "contradictory",
        "The 3 boxes hold 10 pens each, which is 30 pens, but the problem says there are 25 pens in total.\n\n"
        "The problem is contradictory, so it has no single answer.",
        None,
        True,
    ),
    _r(
        "not_determinable",
        "There are 40 students in the class, but no ratio of boys to girls is given.\n\n"
        "The answer is not determinable from the information provided.",
        None,
        True,
    ),
    _r(
        "cant_know",
        "Mia sold 15 cupcakes on Monday. We can't know exactly how many she sold on Tuesday without the total, "
        "so I can't determine the answer.",
        None,
        True,
    ),
    _r(
        "answer_is_that_cannot",
        "The answer is that it cannot be determined, because we don't know the price of the 4 pencils.",
        None,
        True,
    ),
    _r(
        "missing_information",
        "Let's see what we know: Jake runs 5 km each morning and some distance each evening.\n\n"
        "The evening distance is missing from the problem, so we are missing the information needed. "
        "I cannot calculate the weekly total.",
        None,
        True,
    ),
    _r(
        "underdetermined_claude",
        "I need to find how many hours Paul worked.\n\nWe know he earned $96 and worked on 3 days, but his hourly "
        "rate isn't stated anywhere, and without it the problem is underdetermined.",
        None,
        True,
    ),
    _r(
        "final_answer_na",
        "The problem mentions 3 trains and 2 stations, but gives no distances.\n\nFinal answer: N/A",
        None,
        True,
    ),
    _r(
        "json_null_with_numbers",
        '{"reasoning": "We know 7 of the 20 seats are taken, but not how many people are coming.", "answer": null}',
        None,
        True,
    ),
    # --- "can't" inside working that goes on to answer: not a refusal ---------------------------
    _r(
        "cant_buy_half_bus",
        "130 students ÷ 40 seats = 3.25. She can't book a quarter of a bus, so we round up.\n\n"
        "The school needs 4 buses.",
        "4",
    ),
    _r(
        "cannot_find_directly",
        "We cannot find the cost of 10 pens directly; first find the price of one pen: $12 / 4 = $3.\n\n"
        "Then 10 pens cost 10 × $3 = $30.\n\nTen pens cost $30.",
        "30",
    ),
    _r(
        "impossible_to_split",
        "It's impossible to split 7 cookies evenly between 2 children, so one child gets 4 and the other gets 3.\n\n"
        "So the older child gets 4 cookies.",
        "4",
    ),
    _r(
        "not_given_but_assuming",
        "The problem doesn't say whether Tom keeps any stickers, but since he gives them all away, "
        "he has 48 - 48 = 0 left.\n\nTom has 0 stickers left.",
        "0",
    ),
    # --- equal forms of one value are one answer ------------------------------------------------
    _r("percent_or_fraction", "Half of the marbles are red.\n\nThe answer is 50% or 1/2.", "50"),
    _r("fraction_or_percent", "The probability of drawing a red card is 1/4.\n\nFinal answer: 1/4 or 25%", "25"),
    _r(
        "boxed_decimal_or_percent",
        "She answered 30 of 40 questions correctly.\n\n$\\boxed{0.75 \\text{ or } 75\\%}$",
        "75",
    ),
    _r("hash_percent_or_decimal", "The discount is $15 on $60, so 15 / 60 = 0.25.\n#### 25% or 0.25", "25"),
    _r("dollars_two_ways", "The answer is $1,200 or 1200 dollars.", "1200"),
    _r("fraction_or_decimal", "Each friend gets 3/4 of a cake.\n\nThe answer is 3/4 or 0.75.", "0.75"),
    _r("minutes_or_hours", "The walk takes 45 minutes.\n\nThe answer is 45 minutes or 0.75 hours.", "45"),
    _r("concluding_percent_or_fraction", "Half of the 40 marbles are red, so the probability is 50% or 1/2.", "50"),
    _r("concluding_fraction_or_percent", "So 10 of the 40 pupils walk: that is 1/4, or 25%.", "25"),
    _r("concluding_percent_then_decimal", "The discount is $15 on $60, so 25%, or 0.25, of the price.", "25"),
    _r("two_answers_hedge", "Depending on whether the 2 free tickets count, the answer is 12 or 14.", None),
    _r("percent_or_other_fraction_hedge", "The answer is 40% or 1/2, depending on the rounding.", None),
    # --- clock times: the hour when on the hour, else no number ---------------------------------
    _r("hash_two_pm", "He starts at 11:00 am and works 3 hours: 11 + 3 = 14, which is 2:00 pm.\n#### 2:00 pm", "2"),
    _r("answer_is_three_pm", "The bus leaves at 1:00 pm and the trip takes 2 hours.\n\nThe answer is 3:00 pm.", "3"),
    _r("arrives_eleven", "Starting at 8:00 am and driving 3 hours, she will arrive at 11:00 am.", "11"),
    _r("hash_24h", "Leaving at 9:00 and travelling 5 hours:\n#### 14:00", "14"),
    _r("hash_half_past", "Leaving at 1:00 pm and walking 90 minutes:\n#### 2:30 pm", None),
    _r("arrives_quarter_to", "The trip starts at 3:15 pm and lasts 90 minutes, so the train arrives at 4:45 pm.", None),
    _r(
        "finishes_six",
        "She starts at 3:00 pm and works for 3 hours: 3 + 3 = 6.\n\n"
        "She finishes at 6:00 pm, after working for 3 hours from 3:00 pm.",
        "6",
    ),
    # --- units, currency, commas, negatives, decimals, fractions, percentages -----------------
    _r(
        "rope_meters",
        "50 - 37.5 = 12.5\n\nSo the rope is 12.5 meters long, cut from the original 50-meter rope.",
        "12.5",
    ),
    _r("hash_negative", "The balance is 120 - 165 = -45 dollars.\n#### -45", "-45"),
    _r("unicode_minus", "The temperature fell from 3 degrees to −7 degrees.\n\nThe answer is −7 degrees.", "-7"),
    _r(
        "commas_millions",
        "Adding the three cities: 400,000 + 534,567 + 300,000 = 1,234,567.\n\nThe answer is 1,234,567.",
        "1234567",
    ),
    _r("hash_commas", "The school raised $5,000 per week for 2.5 weeks.\n#### 12,500", "12500"),
    _r("latex_dollar_thousands", "The car costs 5 \\times 250 = 1250 dollars.\n\nThe answer is $\\$1{,}250$.", "1250"),
    _r(
        "boxed_frac",
        "Of the 8 slices, 6 remain: \\( \\frac{6}{8} = \\frac{3}{4} \\).\n\n\\[ \\boxed{\\dfrac{3}{4}} \\]",
        "0.75",
    ),
    _r("percent_answer", "The price rose from $40 to $50: 10 / 40 = 0.25.\n\nThe price increased by 25%.", "25"),
    _r(
        "colon_breakdown",
        "Bread needs 6 cups and the cakes need 8 cups: 6 + 8 = 14.\n\n"
        "In total, she needs 14 cups of flour: 6 for the bread and 8 for the cakes.",
        "14",
    ),
    _r("equation_conclusion", "Therefore, the total is 1,024 + 512 = 1,536 bytes.", "1536"),
    _r(
        "since_justification",
        "Each box holds 6 eggs and she needs 24 eggs.\n\nShe needs 4 boxes, since 4 × 6 = 24 eggs.",
        "4",
    ),
    _r(
        "result_then_for",
        "Janet has 16 - 3 - 4 = 9 eggs left to sell. So she earns 9 × $2 = $18 for the 9 eggs.",
        "18",
    ),
    _r("sells_for_price", "Janet has 9 eggs left and sells them all. She sells 9 eggs for $18.", "18"),
    _r(
        "trailing_sentence",
        "Of the 16 glasses, every second one costs $3, so 8 × $5 + 8 × $3 = $64.\n\nKylar needs to pay $64.\n\n"
        "That covers all 16 glasses.",
        "64",
    ),
    _r(
        "check_then_conclusion",
        "30 + 12 = 42 apples in total.\n\nCheck: 42 - 12 = 30 ✓\n\nShe has 42 apples.",
        "42",
    ),
    _r("answer_bold_units", "20 × 2.1 = 42\n\n**Answer: 42 apples**", "42"),
    _r("answer_label_bold_money", "9 × $2 = $18.\n\nAnswer: **$18**", "18"),
    _r("minerva", "We have 3 \\cdot 6 = 18.\n\nThe final answer is $\\boxed{18}$. I hope it is correct.", "18"),
    _r("bold_in_sentence", "9 × 2 = 18\n\nSo, Janet makes **$18** every day at the farmers' market.", "18"),
    _r(
        "out_of_budget",
        "She spends $25 + $40 = $65, so $100 - $65 = $35 remains.\n\nShe has $35 left out of her $100 budget.",
        "35",
    ),
    _r(
        "out_of_currency",
        "Total spent: $65. Remaining: $100 - $65 = $35.\n\nThat means $35 is left out of $100.",
        "35",
    ),
    _r("take_days_to_read", "120 pages ÷ 30 pages per day = 4 days.\n\nIt takes him 4 days to read 120 pages.", "4"),
    _r(
        "after_years",
        "The tree grows 2 feet a year: 15 + 4 × 2 = 23.\n\nAfter 4 years, the tree will be 23 feet tall.",
        "23",
    ),
    _r(
        "appositive",
        "Last week she scored 30 points. This week she scored 30 + 15 = 45.\n\n"
        "She scored 45 points, 15 more than last week.",
        "45",
    ),
    _r(
        "parenthetical",
        "8 bags × 3 apples = 24 apples.\n\nHe has 24 apples (8 bags of 3 apples each).",
        "24",
    ),
    _r(
        "think_block",
        "<think>16 - 3 - 4 = 9 eggs; 9 × 2 = 18 dollars. The question asks how much she makes: 18.</think>\n\n"
        "Janet makes $18 a day from the 9 eggs she sells.",
        "18",
    ),
    _r(
        "self_correction",
        "The answer is 20.\n\nWait, I forgot the 5 from Tuesday. Recalculating: 20 + 5 = 25.\n\nThe answer is 25.",
        "25",
    ),
    _r("words_answer", "She has twenty-five dollars left.\n\nThe answer is twenty-five dollars.", "25"),
    _r(
        "claude_markdown",
        "I'll solve this step by step.\n\n**Given:**\n- 4 packs of markers\n- 12 markers per pack\n- 7 markers lost\n\n"
        "**Total markers:** 4 × 12 = 48\n\n**After losing some:** 48 − 7 = 41\n\n"
        "Emma has **41 markers** left from the 4 packs she bought.",
        "41",
    ),
    _r(
        "gpt4_latex_steps",
        "To solve this, let's define the quantities.\n\n1. The shirt costs \\( \\$25 \\).\n"
        "2. The pants cost twice as much: \\( 2 \\times 25 = 50 \\).\n"
        "3. Together: \\( 25 + 50 = 75 \\).\n\nThus, John spends \\$75 on the shirt and the 2 pairs of socks he skipped.",
        "75",
    ),
    _r(
        "llama_final_answer_plain",
        "## Step 1: Find the number of weeks\nThere are 52 weeks in a year.\n\n"
        "## Step 2: Multiply by the weekly amount\n52 × 15 = 780\n\nThe final answer is: 780",
        "780",
    ),
]

# Written after the rules above were settled and read without changing them (40 of 40 agreed):
# a check that the rules are not fitted to the replies above.
HELD_OUT = [
    _r(
        "held_01",
        "Let's calculate.\n\nJohn buys 3 packs of 20 pencils: 3 × 20 = 60 pencils.\nHe gives 15 to his classmates: 60 − 15 = 45.\n\nJohn has 45 pencils left after giving 15 to his classmates.",
        "45",
    ),
    _r(
        "held_02",
        "First, the cost of the tickets: 4 adults × $12 = $48 and 3 children × $7 = $21.\nTotal: $48 + $21 = $69.\n\nThe family pays $69 for the 7 tickets.",
        "69",
    ),
    _r(
        "held_03",
        "**Step 1:** Books per shelf: 5 shelves hold 240 books, so 240 / 5 = 48 books per shelf.\n\n**Step 2:** With 2 more shelves: 48 × 7 = 336.\n\nThe bookcase can hold **336 books** with 7 shelves.",
        "336",
    ),
    _r(
        "held_04",
        "The recipe uses 3 cups of flour for 12 cookies. For 36 cookies she needs 36 / 12 = 3 times as much: 3 × 3 = 9 cups.\n\nShe needs 9 cups of flour to bake 36 cookies.",
        "9",
    ),
    _r(
        "held_05",
        "Speed = distance / time = 150 miles / 3 hours = 50 mph.\n\nThe car travels at 50 mph over the 150-mile trip.",
        "50",
    ),
    _r(
        "held_06",
        "Let x be the number of apples Anna has. Ben has x + 6 and together they have 30:\nx + (x + 6) = 30\n2x = 24\nx = 12\n\nAnna has 12 apples, and Ben has 18.",
        "12",
    ),
    _r(
        "held_07",
        "The shop had 500 shirts. It sold 35% of them: 0.35 × 500 = 175.\n\n500 − 175 = 325 shirts remain.\n\nThere are 325 shirts left in the shop out of the original 500.",
        "325",
    ),
    _r(
        "held_08",
        "To solve this problem:\n\n- Monthly rent: $1,200\n- Months in a year: 12\n- Annual rent: $1,200 × 12 = $14,400\n\nSo Maya pays $14,400 in rent each year, or $1,200 a month.",
        "14400",
    ),
    _r(
        "held_09",
        "We need the total number of legs.\n\nChickens: 7 × 2 = 14\nCows: 5 × 4 = 20\n\nTotal legs = 14 + 20 = 34\n\nThere are 34 legs on the farm among the 12 animals.",
        "34",
    ),
    _r(
        "held_10",
        "I'm sorry, but I can't determine how much Lucy earned: the problem gives her 8 hours of work but not her hourly wage.",
        None,
        True,
    ),
    _r(
        "held_11",
        "The problem says Jack has some marbles and gives away 5, but it never tells us how many he started with, so there's no way to know how many he has now.",
        None,
        True,
    ),
    _r(
        "held_12",
        "Since the question doesn't specify how many red balls are in the bag, the probability cannot be calculated. We only know there are 6 blue balls.",
        None,
        True,
    ),
    _r(
        "held_13",
        "Let me compute the time. Leaving at 7:00 am and driving 4 hours gets him there at 11:00 am.\n\nHe arrives at 11:00 am.",
        "11",
    ),
    _r(
        "held_14",
        "A dozen roses cost $24, so one rose costs $24 / 12 = $2. Eight roses cost 8 × $2 = $16.\n\nTherefore, 8 roses cost $16.",
        "16",
    ),
    _r("held_15", "Total distance: 3 laps × 400 m = 1,200 m.\n\nShe runs 1,200 meters, which is 1.2 km.", "1200"),
    _r(
        "held_16",
        "## Solution\n\nThe tank fills at 15 liters per minute. To fill 600 liters: 600 / 15 = 40 minutes.\n\n**It takes 40 minutes to fill the 600-liter tank.**",
        "40",
    ),
    _r(
        "held_17",
        "The original price is $80 and the discount is 25%, so the discount is $80 × 0.25 = $20. The sale price is $80 − $20 = $60.\n\nThe jacket costs $60 after the 25% discount.",
        "60",
    ),
    _r(
        "held_18",
        "In 2 hours the first train covers 2 × 60 = 120 miles and the second covers 2 × 45 = 90 miles. Together that's 120 + 90 = 210 miles.\n\nAfter 2 hours the trains are 210 miles apart.",
        "210",
    ),
    _r(
        "held_19",
        "Each week she saves $15. After 8 weeks: 15 × 8 = $120. She needs $150 for the bike, so she still needs $150 - $120 = $30.\n\nShe needs $30 more to buy the $150 bike.",
        "30",
    ),
    _r(
        "held_20",
        "The farmer plants 8 rows of 15 trees: 8 × 15 = 120 trees. 10% die: 120 × 0.1 = 12. So 120 − 12 = 108 trees survive.\n\nThe answer: 108 trees survive out of the 120 planted.",
        "108",
    ),
    _r(
        "held_21",
        "Step 1: 6 boxes × 24 crayons = 144 crayons.\nStep 2: 144 ÷ 18 students = 8 crayons each.\n\nEach of the 18 students gets 8 crayons.",
        "8",
    ),
    _r(
        "held_22",
        "Tim is 8 now. His father is 4 times as old: 4 × 8 = 32. In 10 years his father will be 32 + 10 = 42.\n\nTim's father will be 42 years old in 10 years.",
        "42",
    ),
    _r(
        "held_23", "Half of 50 is 25, and a fifth of 25 is 5.\n\n5 cupcakes are chocolate out of the 50 she baked.", "5"
    ),
    _r(
        "held_24",
        "They need 3 pizzas per 8 people. For 24 people: 24 / 8 = 3 groups, 3 × 3 = 9 pizzas.\n\nThey should order **9** pizzas for the 24 guests.",
        "9",
    ),
    _r("held_25", "The show starts at 7:30 pm and lasts 2 hours, so it ends at 9:30 pm.", None),
    _r(
        "held_26",
        "It rains on 40% of the 30 days: 0.4 × 30 = 12 days. So it is dry on 30 − 12 = 18 days.\n\nIt didn't rain on 18 of the 30 days in June.",
        "18",
    ),
    _r(
        "held_27",
        "1. Cost of apples: 4 kg × $3/kg = $12\n2. Cost of oranges: 2 kg × $4/kg = $8\n3. Total: $12 + $8 = $20\n4. Change from $50: $50 − $20 = $30\n\nShe receives $30 in change when paying with a $50 bill.",
        "30",
    ),
    _r(
        "held_28",
        "The elevator can carry 600 kg. Each person weighs about 75 kg: 600 / 75 = 8.\n\nAt most 8 people, each weighing 75 kg, can ride the elevator.",
        "8",
    ),
    _r(
        "held_29",
        "The gym charges $25 per month plus a $50 signup fee. For a year: 12 × $25 = $300, plus $50 = $350.\n\nThe total cost for 12 months is $350.",
        "350",
    ),
    _r(
        "held_30",
        "The pool is 25 m long. Swimming 1,000 m means 1,000 / 25 = 40 lengths.\n\nShe swims 40 lengths to cover 1,000 meters in the 25-meter pool.",
        "40",
    ),
    _r(
        "held_31",
        "Sara reads 20 pages per hour. The book has 180 pages, so it takes 180 / 20 = 9 hours. If she reads 3 hours a day, that's 9 / 3 = 3 days.\n\nIt takes Sara 3 days to read the book, reading 3 hours a day.",
        "3",
    ),
    _r(
        "held_32",
        "Given the information, the problem is missing the number of students in the second class, so I can't find the total.",
        None,
        True,
    ),
    _r(
        "held_33",
        "The scores were 72, 88 and 95: sum 72 + 88 + 95 = 255 and average 255 / 3 = 85.\n\nThe average of the 3 scores is 85.",
        "85",
    ),
    _r(
        "held_34",
        "Each bracelet needs 15 beads. With 200 beads she can make 200 / 15 = 13.33, so 13 bracelets.\n\nShe can make 13 bracelets with 5 beads left over.",
        "13",
    ),
    _r(
        "held_35",
        "**Solution:**\n\nWater used per day: 4 people × 50 liters = 200 liters.\nPer week: 200 × 7 = 1,400 liters.\n\n**The family uses 1,400 liters of water per week.**",
        "1400",
    ),
    _r(
        "held_36",
        "The difference between 1,500 and 975 is 1,500 − 975 = 525.\n\nThe school needs to raise $525 more to reach its $1,500 goal.",
        "525",
    ),
    _r(
        "held_37",
        "Jenny earns $18 per hour and works 6 hours a day for 5 days: 18 × 6 × 5 = $540.\n\nJenny earns $540 for her 30 hours of work this week.",
        "540",
    ),
    _r(
        "held_38",
        "We need 2 1/2 cups per batch... 3 batches need 3 × 2.5 = 7.5 cups.\n\nShe needs 7.5 cups of sugar for 3 batches.",
        "7.5",
    ),
    _r("held_39", "The temperature rose from -8°C to 5°C: 5 − (−8) = 13.\n\nThe temperature rose by 13 degrees.", "13"),
    _r(
        "held_40",
        "Total: 12 + 15 + 9 = 36 stickers. Shared equally among 4 friends: 36 / 4 = 9 each.\n\nEach friend gets 9 stickers, for a total of 36.",
        "9",
    ),
]

# A second batch, written after the first commit of the rules: 29 of 30 agreed when first read; the
# miss ("$350 over the 3 weeks: $50 + $100 + $200" read as 200, the last calculation's result,
# which the sentence states only after the restating phrase) changed rule 3 of the conclusion.
HELD_OUT_2 = [
    _r(
        "held2_01",
        "The first 3 days she walks 2 miles each: 3 × 2 = 6 miles. The next 4 days she walks 3 miles each: 4 × 3 = 12 miles.\n\nAltogether, she walks 18 miles in the 7 days.",
        "18",
    ),
    _r(
        "held2_02",
        "Let's denote the cost of one notebook as n.\n\n5n + 2(3) = 26\n5n = 20\nn = 4\n\nEach notebook costs $4, and the 2 pens cost $6 in total.",
        "4",
    ),
    _r(
        "held2_03",
        "Cookies baked: 4 trays × 12 = 48. Cookies eaten: 48 × 1/4 = 12. Cookies left: 48 − 12 = 36.\n\n**Answer:** 36 cookies remain.",
        "36",
    ),
    _r(
        "held2_04",
        "Mark has $200. He spends 1/4 on books: 200 × 1/4 = 50. He spends 1/2 of the remainder on clothes: (200 − 50) / 2 = 75.\n\nSo he has $75 left after buying the books and the clothes.",
        "75",
    ),
    _r("held2_05", "Total students = 25 + 30 + 28 = 83.\n\nThe school has 83 students across its 3 classes.", "83"),
    _r(
        "held2_06",
        "The rectangle's area is length × width = 15 × 8 = 120 square feet. Carpet costs $3 per square foot: 120 × 3 = $360.\n\nIt will cost $360 to carpet the 15 ft by 8 ft room.",
        "360",
    ),
    _r(
        "held2_07",
        "He needs 3 pieces of 2.5 m: 3 × 2.5 = 7.5 m. From a 10 m roll, 10 − 7.5 = 2.5 m remain.\n\n2.5 meters of wire are left on the 10-meter roll.",
        "2.5",
    ),
    _r(
        "held2_08",
        "Without knowing the number of girls, I can't compute the ratio. The problem only tells us there are 14 boys.",
        None,
        True,
    ),
    _r(
        "held2_09",
        "There's no way to determine the final price, since the discount percentage is missing. We know only the $60 original price.",
        None,
        True,
    ),
    _r(
        "held2_10",
        "Week 1: $50. Week 2: $50 × 2 = $100. Week 3: $100 × 2 = $200.\n\nShe earns $350 over the 3 weeks: $50 + $100 + $200.",
        "350",
    ),
    _r(
        "held2_11",
        "The bakery makes 120 muffins. 3/5 are blueberry: 120 × 3/5 = 72. The rest are chocolate: 120 − 72 = 48.\n\nThere are 48 chocolate muffins.",
        "48",
    ),
    _r(
        "held2_12",
        "Ticket price after a 20% discount: $15 × 0.8 = $12. For 6 tickets: 6 × $12 = $72.\n\n**$72** is the total for 6 discounted tickets.",
        "72",
    ),
    _r(
        "held2_13",
        "Since 1 hour = 60 minutes, 3.5 hours = 3.5 × 60 = 210 minutes.\n\nThe flight lasts 210 minutes.",
        "210",
    ),
    _r(
        "held2_14",
        "The printer prints 30 pages per minute. For 450 pages: 450 ÷ 30 = 15 minutes.\n\nIt takes 15 minutes to print all 450 pages at 30 pages per minute.",
        "15",
    ),
    _r(
        "held2_15",
        "She started with 40 stamps, bought 25 more and gave 18 away: 40 + 25 − 18 = 47.\n\nNow she has 47 stamps in her collection.",
        "47",
    ),
    _r(
        "held2_16",
        "Lisa's height is 150 cm and her brother is 20% taller: 150 × 1.2 = 180 cm.\n\nHer brother is 180 cm tall, 30 cm taller than Lisa.",
        "180",
    ),
    _r(
        "held2_17",
        "The store ordered 12 boxes of 24 cans: 12 × 24 = 288 cans. 15 cans were damaged.\n\n288 − 15 = 273 cans can be sold.",
        "273",
    ),
    _r(
        "held2_18",
        "The total bill is $84. With a 15% tip: 84 × 0.15 = 12.60. Total: 84 + 12.60 = $96.60. Split 4 ways: 96.60 / 4 = $24.15.\n\nEach person pays $24.15.",
        "24.15",
    ),
    _r(
        "held2_19",
        "Each day the snail climbs 3 feet and slips back 2 feet, a net gain of 1 foot per day. After 7 days it is at 7 feet; on day 8 it climbs 3 feet to reach 10 feet.\n\nThe snail reaches the top of the 10-foot wall on day 8.",
        "8",
    ),
    _r(
        "held2_20",
        "The question is unclear about whether the 5 extra chairs are included in the 40, so I cannot give a definitive answer.",
        None,
        True,
    ),
    _r(
        "held2_21",
        "**Solution**\n\n1. Weekly allowance: $12\n2. Weeks to save: $180 ÷ $12 = 15\n\nTom needs **15 weeks** to save $180.",
        "15",
    ),
    _r(
        "held2_22",
        "Price per pound = $18 / 6 pounds = $3 per pound.\nCost of 10 pounds = 10 × $3 = $30.\n\nThus, 10 pounds of cherries cost $30.",
        "30",
    ),
    _r(
        "held2_23",
        "If the train leaves at 10:00 am and the trip takes 3 hours, it arrives at 1:00 pm.\n\n#### 1:00 pm",
        "1",
    ),
    _r(
        "held2_24",
        "Ann is 5 years older than Ben, who is 12: 12 + 5 = 17. In 3 years Ann will be 17 + 3 = 20.\n\nAnn will be 20 in 3 years.",
        "20",
    ),
    _r(
        "held2_25",
        "The farm has 45 cows and 3 times as many sheep: 45 × 3 = 135 sheep. Total animals: 45 + 135 = 180.\n\nThere are 180 animals on the farm.",
        "180",
    ),
    _r("held2_26", "Answer: The probability is 0.3, or 30%.", "30"),
    _r(
        "held2_27",
        "The class collected 3,450 cans in the first week and 2,875 in the second.\n\n3,450 + 2,875 = 6,325\n\nThe class collected 6,325 cans over the 2 weeks.",
        "6325",
    ),
    _r(
        "held2_28",
        "A recipe calls for 2/3 cup of sugar per batch; 6 batches need 6 × 2/3 = 4 cups.\n\nShe needs 4 cups of sugar for 6 batches.",
        "4",
    ),
    _r(
        "held2_29",
        "The loss is $250 − $310 = −$60.\n\nThe shop lost $60 on the sale, selling for $250 an item that cost $310.",
        "60",
    ),
    _r("held2_30", "Depth after 6 hours: 2 + 6 × 0.5 = 5 feet.\n\nThe water will be 5 feet deep after 6 hours.", "5"),
]

# A third batch, written after the second commit of the rules: 30 of 30 agreed when first read.
HELD_OUT_3 = [
    _r(
        "held3_01",
        "| Item | Cost |\n|---|---|\n| Shirt | $20 |\n| Shoes | $45 |\n| Hat | $12 |\n\nTotal: $20 + $45 + $12 = $77\n\nSo Mike spent $77 on the 3 items.",
        "77",
    ),
    _r(
        "held3_02",
        "Let me set up an equation. If c is the number of cats, dogs = 2c, and c + 2c = 27, so 3c = 27 and c = 9.\n\nThere are 9 cats and 18 dogs at the shelter.",
        "9",
    ),
    _r(
        "held3_03",
        "First, Jane's pay for regular hours: 40 × $15 = $600.\nOvertime: 5 hours × $15 × 1.5 = $112.50.\nTotal: $600 + $112.50 = $712.50.\n\nJane earns $712.50 for the 45 hours she worked.",
        "712.5",
    ),
    _r("held3_04", "#### 56\n\nExplanation: 8 boxes of 7 = 56 crayons.", "56"),
    _r(
        "held3_05",
        "**Given:** 3 cars, each with 4 tires, plus 2 spares per car.\n\n**Solution:** 3 × (4 + 2) = 18\n\n**Answer:** 18 tires",
        "18",
    ),
    _r(
        "held3_06",
        "The area of the circle with radius 10 cm is π × 10² ≈ 314 cm².\n\nThe answer is approximately 314 square centimeters.",
        "314",
    ),
    _r(
        "held3_07",
        "I think we need more details here. The question asks how long the trip takes, but the distance is not given, and neither is the speed. Could you share the missing information?",
        None,
        True,
    ),
    _r(
        "held3_08",
        "Based on the information, it's impossible to tell how many cookies each child got, because the number of children isn't given.",
        None,
        True,
    ),
    _r(
        "held3_09",
        "Each row has 12 seats and there are 25 rows: 12 × 25 = 300. 45 seats are reserved.\n\n300 − 45 = 255 seats are available to the public, out of the 300 total.",
        "255",
    ),
    _r(
        "held3_10",
        "Let's compute:\n- Morning: 120 customers\n- Afternoon: 120 × 1.5 = 180\n- Evening: 180 − 60 = 120\n\nTotal: 120 + 180 + 120 = 420 customers.",
        "420",
    ),
    _r(
        "held3_11",
        "Rate of the faucet: 5 gallons per minute. Tub capacity: 60 gallons. Time = 60 ÷ 5 = 12 minutes.\n\nIt takes 12 minutes to fill the tub.",
        "12",
    ),
    _r("held3_12", "The number of pages Ali read over the 5 days is 20 + 25 + 30 + 35 + 40 = 150.\n\n#### 150", "150"),
    _r(
        "held3_13",
        "Sarah's age now: 3 × 6 = 18. Her age 4 years ago: 18 − 4 = 14.\n\nSarah was 14 years old 4 years ago.",
        "14",
    ),
    _r(
        "held3_14",
        "The first plane holds 180 passengers and the second holds 2/3 as many: 180 × 2/3 = 120. Together they hold 180 + 120 = 300.\n\nThe two planes hold 300 passengers altogether.",
        "300",
    ),
    _r(
        "held3_15",
        "A week has 7 days, so over 3 weeks she practices 3 × 7 × 45 = 945 minutes.\n\nConverting: 945 / 60 = 15.75 hours.\n\nShe practices 945 minutes in total.",
        "945",
    ),
    _r("held3_16", "The answer is **12**.\n\nHere's why: the 4 friends split 48 stickers evenly, 48 / 4 = 12.", "12"),
    _r(
        "held3_17",
        "Step 1: 250 ml per glass × 8 glasses = 2,000 ml.\nStep 2: 2,000 ml = 2 liters.\n\nHe drinks 2 liters of water a day from the 8 glasses.",
        "2",
    ),
    _r(
        "held3_18",
        "We have 5 packs × 8 hot dogs = 40 hot dogs and 4 packs × 10 buns = 40 buns.\n\nThey have 40 hot dogs and 40 buns, so none are left over.",
        "40",
    ),
    _r(
        "held3_19",
        "The problem is asking for a value we cannot compute without knowing the tax rate, and the tax rate is not stated.",
        None,
        True,
    ),
    _r(
        "held3_20",
        "Monthly savings: $2,500 − $1,800 = $700. Yearly: 700 × 12 = 8,400.\n\nHe saves $8,400 a year, saving $700 each month.",
        "8400",
    ),
    _r(
        "held3_21",
        "It costs $0.25 per minute. A 1-hour call is 60 minutes: 60 × 0.25 = $15.\n\n**Therefore, a 1-hour call costs $15.**",
        "15",
    ),
    _r("held3_22", "The perimeter of a square with side 9 in is 4 × 9 = 36 in.\n\nFinal answer: 36 inches", "36"),
    _r(
        "held3_23",
        "5 friends each bring 3 snacks, and 2 more snacks are bought: 5 × 3 + 2 = 17.\n\nThey have 17 snacks for the party.",
        "17",
    ),
    _r(
        "held3_24",
        "The distance is 45 miles. At 15 mph it takes 45 / 15 = 3 hours. Leaving at 9:00 am, she arrives at 12:00 pm.\n\nShe arrives at noon, 3 hours after leaving.",
        "3",
    ),
    _r(
        "held3_25",
        "Amy bought 2 notebooks for $3.50 each and a $4.25 pen.\n\n2 × 3.50 + 4.25 = 7 + 4.25 = 11.25\n\nAmy paid $11.25.",
        "11.25",
    ),
    _r(
        "held3_26",
        "The recipe serves 4 and needs 300 g of pasta, so for 10 people: 300 / 4 × 10 = 750 g.\n\nShe needs 750 grams of pasta for 10 people, which is 75 grams per person.",
        "750",
    ),
    _r(
        "held3_27",
        "Half of the 36 students are girls: 36 / 2 = 18. A third of the girls play soccer: 18 / 3 = 6.\n\n6 girls play soccer.",
        "6",
    ),
    _r(
        "held3_28",
        "Jim runs 4 miles on weekdays and 6 miles on each weekend day: 5 × 4 + 2 × 6 = 20 + 12 = 32.\n\nIn one week Jim runs 32 miles, 20 on weekdays and 12 on weekends.",
        "32",
    ),
    _r(
        "held3_29",
        "Unfortunately the question has an error: it says there are 10 apples, then that 12 were eaten. This isn't possible, so it can't be answered.",
        None,
        True,
    ),
    _r(
        "held3_30",
        "Original: 60 minutes. Reduced by 25%: 60 × 0.75 = 45.\n\nThe new commute takes 45 minutes, 15 minutes less than the original 60.",
        "45",
    ),
]

STRONG = [*_composed(), *HAND, *HELD_OUT, *HELD_OUT_2, *HELD_OUT_3]
