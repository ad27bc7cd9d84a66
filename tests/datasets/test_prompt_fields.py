"""An item's question as prompt text and the question read back from a rendered prompt."""

from __future__ import annotations

import subprocess
import sys

import pytest

from evalcore.benchmarks import builtin_names, load
from evalcore.datasets import choices_text, prompt_question, question_text
from evalcore.runs import load_template, render


def _user(text: str) -> list[dict[str, str]]:
    return [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "earlier"},
        {"role": "assistant", "content": "A"},
        {"role": "user", "content": text},
    ]


def test_choices_text_and_question_text():
    assert choices_text(["one", "two", "three", "four"]) == "(A) one\n(B) two\n(C) three\n(D) four"
    assert question_text({"question": "Q?", "choices": ["x", "y"]}) == "Q?\n(A) x\n(B) y"
    assert question_text({"question": "Q?", "choices_text": "(A) x"}) == "Q?\n(A) x"
    assert question_text({"prompt": "def f():\n"}) == "def f():\n"
    # a {choices} field read back from a prompt is text, not a list of options
    assert question_text({"question": "Q?", "choices": "['x', 'y']"}) == "Q?"


@pytest.mark.parametrize("dataset", builtin_names())
def test_the_shipped_templates_give_back_the_items_question(dataset):
    """What a template renders, prompt_question reads back: the item's question (and options)."""
    template = load_template(dataset)
    for item in load(dataset, source="sample", limit=3):
        messages = render(template, item, few_shot=load(dataset, source="sample", limit=2))
        assert prompt_question(messages, template.user) == question_text(item.fields)


def test_prompt_question_falls_back_to_the_last_user_turn():
    mc = "About {subject}.\n\n{question}\n{choices_text}\n\nReply with the letter."
    text = mc.format(subject="x", question="Which?", choices_text="(A) a\n(B) b")
    assert prompt_question(_user(text), mc) == "Which?\n(A) a\n(B) b"
    assert prompt_question(_user(text)) == text  # no template
    assert prompt_question(_user("Other wording: Which?"), mc) == "Other wording: Which?"  # no match
    assert prompt_question(_user("Q: hi"), "Q: {text}") == "Q: hi"  # no {question} to read back
    assert prompt_question(_user("Q: "), "Q: {question}") == "Q: "  # an empty question
    assert prompt_question([{"role": "system", "content": "s"}], mc) == ""
    assert prompt_question(None) == ""


def test_mmlu_prompts_show_the_same_options_as_the_query():
    from evalcore.runs._prompts import item_fields

    item = load("mmlu", source="sample", limit=1)[0]
    assert item_fields(item)["choices_text"] == choices_text(item.fields["choices"])


def test_importing_the_package_loads_no_loader():
    """The package re-exports lazily: importing it loads none of its modules."""
    code = (
        "import sys, evalcore.datasets as d; "
        "print(sorted(m for m in sys.modules if m.startswith('evalcore.datasets.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
