"""Does the embedded model's judge carry any signal? Ways of asking it, scored by log-probability.

Run: python bench/embedded_judge_probe.py [--eval]
(prints a table; writes nothing)

The eval (bench/embedded_eval.py) found SmolLM2-135M's judge right 26 times
out of 50, saying "true" 49 times. Sampling is not the only problem if the
model's probabilities themselves do not separate true conditions from false
ones, so each method here reads llama.cpp's token log-probabilities (one
forward pass, no sampling) for a development set of 40 conditions of its own
(20 conditions, each with a value that meets it and one that does not; none
is among the eval's), and reports:

- pairwise: for how many conditions the value that meets it scores higher
  than the one that does not (chance: half; this needs no threshold);
- raw: right answers when "true" wins over "false" as they come;
- calibrated: right answers after contextual calibration (Zhao et al. 2021:
  each answer's probability divided by the one it gets with the value
  replaced by "N/A").

Methods: the runtime's own judge prompt with the reply prefilled up to
`{"answer":` (true / false); the same question asked as yes or no, with
`Answer:` prefilled; that question after six worked examples (few-shot); and
a channel score, log P(value | the condition) - log P(value | nothing)
(the value's tokens forced by a grammar), whose calibrated form subtracts
the same score for "N/A". `--eval` scores the eval's 50 conditions instead
(to report, not to choose a method by).
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.report import load_average

DEV: tuple[tuple[str, str, bool], ...] = (
    ("the message asks for a refund", "I want my money back for this broken kettle.", True),
    ("the message asks for a refund", "The kettle arrived on time, thanks.", False),
    ("the text mentions a colour", "She painted the door bright red.", True),
    ("the text mentions a colour", "She painted the door yesterday.", False),
    ("the value is a negative number", "-17", True),
    ("the value is a negative number", "23", False),
    ("the note is about sport", "The team scored twice in the second half.", True),
    ("the note is about sport", "The bakery opens at seven.", False),
    ("the reply refuses the request", "Sorry, I cannot help with that.", True),
    ("the reply refuses the request", "Sure, here is the file you asked for.", False),
    ("the text is written in German", "Ich habe heute keine Zeit.", True),
    ("the text is written in German", "I have no time today.", False),
    ("the sentence mentions a city", "We flew to Paris last spring.", True),
    ("the sentence mentions a city", "We flew somewhere last spring.", False),
    ("the review is negative", "Terrible food and rude staff; never again.", True),
    ("the review is negative", "Lovely food and friendly staff; we will return.", False),
    ("the commit message mentions a bug fix", "Fix crash when the config file is empty", True),
    ("the commit message mentions a bug fix", "Add a dark theme to the settings page", False),
    ("the text contains a phone number", "Call us on 555-0142 any day.", True),
    ("the text contains a phone number", "Call us any day.", False),
    ("the log shows an error", "ERROR: connection refused on port 5432", True),
    ("the log shows an error", "INFO: server started on port 8080", False),
    ("the answer is a single word", "Blue", True),
    ("the answer is a single word", "The sky is blue because of scattering.", False),
    ("the request is urgent", "Please fix this immediately, production is down!", True),
    ("the request is urgent", "Whenever you have time next month, no rush.", False),
    ("the text mentions money", "He paid 300 euros for the bike.", True),
    ("the text mentions money", "He rode the bike to work.", False),
    ("the plan mentions testing", "We will write unit tests before the release.", True),
    ("the plan mentions testing", "We will write the release notes.", False),
    ("the question is about history", "When did the Roman Empire fall?", True),
    ("the question is about history", "How do I bake bread?", False),
    ("the feedback is positive", "Great work, the demo was excellent.", True),
    ("the feedback is positive", "The demo crashed and nobody understood it.", False),
    ("the text mentions a person's name", "Maria signed the contract.", True),
    ("the text mentions a person's name", "Someone signed the contract.", False),
    ("the list is sorted alphabetically", "apple, banana, cherry", True),
    ("the list is sorted alphabetically", "cherry, apple, banana", False),
    ("the value is empty", "", True),
    ("the value is empty", "some text", False),
)
SHOTS = (
    ("The river flooded the village last night.", "the text describes a natural event", "Yes"),
    ("Please close the window.", "the text is a question", "No"),
    ("I love this song so much!", "the text expresses a positive feeling", "Yes"),
    ("The meeting is on Tuesday.", "the text mentions a number", "No"),
    ("7, 3, 12", "the values are all numbers", "Yes"),
    ("The printer is out of paper.", "the text is about food", "No"),
)
CONTENT_FREE = "N/A"
TOP = 50


class Probe:
    """The embedded model in process, asked for log-probabilities only."""

    def __init__(self) -> None:
        xllamacpp: Any = importlib.import_module("xllamacpp")

        from prose.llm.local import embedded_model_file
        from prose.llm.local_engine import sleep_at_openmp_barriers

        sleep_at_openmp_barriers()
        params = xllamacpp.CommonParams()
        params.model.path = str(embedded_model_file())
        params.n_ctx, params.n_parallel, params.verbosity, params.warmup = 4096, 1, -1, False
        params.cpuparams.n_threads = params.cpuparams_batch.n_threads = 1
        self.server = xllamacpp.Server(params)

    def next_token(self, messages: list[dict[str, str]], prefill: str) -> list[dict[str, Any]]:
        """The most likely next tokens after the chat `messages` and the reply's `prefill`."""
        start = [{"role": "assistant", "content": prefill}] if prefill else []
        body = {"messages": [*messages, *start],
                "max_tokens": 1, "logprobs": True, "top_logprobs": TOP, "temperature": 0}
        reply = self.server.handle_chat_completions(body)
        top: list[dict[str, Any]] = reply["choices"][0]["logprobs"]["content"][0]["top_logprobs"]
        return top

    def text_logprob(self, prefix: str, text: str) -> float:
        """log P(text | prefix) as plain text (no chat template), the text forced by a grammar."""
        if not text:
            return 0.0
        grammar = "%llguidance {}\nstart: " + json.dumps(text)
        reply = self.server.handle_completions({"prompt": prefix, "grammar": grammar,
                                                "max_tokens": 256, "n_probs": 1,
                                                "temperature": 0})
        return float(sum(t["logprob"] for t in reply["choices"][0]["logprobs"]["content"]))


def word_probabilities(top: list[dict[str, Any]], words: tuple[str, str]) -> tuple[float, float]:
    def mass(word: str) -> float:
        return sum(math.exp(t["logprob"]) for t in top if t["token"].strip().lower() == word)
    return mass(words[0]) + 1e-9, mass(words[1]) + 1e-9


def yes_no(condition: str, value: str) -> str:
    return f"Text: {value}\nStatement: {condition}.\nIs the statement true? Answer yes or no."


def methods(probe: Probe) -> dict[str, Callable[[str, str], tuple[float, float]]]:
    from prose.runtime.prompts import PromptBuilder, messages_to_dicts

    prompts = PromptBuilder()

    def runtime_json(condition: str, value: str) -> tuple[float, float]:
        messages = messages_to_dicts(prompts.judge_messages(condition, {"value": value}))
        return word_probabilities(probe.next_token(messages, '{"answer":'), ("true", "false"))

    def question(condition: str, value: str) -> tuple[float, float]:
        messages = [{"role": "user", "content": yes_no(condition, value)}]
        return word_probabilities(probe.next_token(messages, "Answer:"), ("yes", "no"))

    def few_shot(condition: str, value: str) -> tuple[float, float]:
        messages = [{"role": "system", "content": "You check whether a statement about a text "
                     "is true. Answer yes or no."}]
        for shot_value, shot_condition, answer in SHOTS:
            messages += [{"role": "user", "content": yes_no(shot_condition, shot_value)},
                         {"role": "assistant", "content": answer}]
        messages.append({"role": "user", "content": yes_no(condition, value)})
        return word_probabilities(probe.next_token(messages, ""), ("yes", "no"))

    def channel(condition: str, value: str) -> tuple[float, float]:
        # As probabilities of "true" and "false": exp(score) against 1.
        given = probe.text_logprob(f"{condition[0].upper()}{condition[1:]}. For example:\n", value)
        alone = probe.text_logprob("For example:\n", value)
        return math.exp(max(min(given - alone, 50.0), -50.0)), 1.0

    return {"runtime prompt, {\"answer\": true/false": runtime_json,
            "yes/no question, Answer: prefilled": question,
            "yes/no question after 6 examples": few_shot,
            "channel: log P(value | condition) - log P(value)": channel}


def score(rows: list[tuple[bool, tuple[float, float], tuple[float, float]]]) -> dict[str, int]:
    shares = [p[0] / (p[0] + p[1]) for _, p, _ in rows]
    calibrated = [(p[0] / q[0]) / (p[0] / q[0] + p[1] / q[1]) for _, p, q in rows]
    truths = [truth for truth, _, _ in rows]
    pairs = [(i, i + 1) for i in range(0, len(rows) - 1, 2) if truths[i] != truths[i + 1]]
    return {
        "pairwise": sum((shares[i] > shares[j]) == truths[i] for i, j in pairs),
        "pairs": len(pairs),
        "raw": sum((s > 0.5) == t for s, t in zip(shares, truths, strict=True)),
        "raw_true": sum(s > 0.5 for s in shares),
        "calibrated": sum((s > 0.5) == t for s, t in zip(calibrated, truths, strict=True)),
        "calibrated_true": sum(s > 0.5 for s in calibrated),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--eval", action="store_true",
                        help="score the eval's 50 conditions instead of the development set")
    parser.add_argument("--only", action="append", default=[], metavar="WORD",
                        help="only the methods whose name contains WORD")
    args = parser.parse_args()
    if args.eval:
        from bench.embedded_eval import CONDITIONS
        items = CONDITIONS
    else:
        items = DEV
    before = load_average()
    probe = Probe()
    print(f"{'eval' if args.eval else 'development'} set, {len(items)} conditions "
          f"({sum(t for *_, t in items)} true); load {before:.2f}")
    print("| method | pairwise | raw (said true) | calibrated (said true) |\n|---|---|---|---|")
    for name, method in methods(probe).items():
        if args.only and not any(word in name for word in args.only):
            continue
        rows = [(truth, method(text, value), method(text, CONTENT_FREE))
                for text, value, truth in items]
        s = score(rows)
        print(f"| {name} | {s['pairwise']}/{s['pairs']} | {s['raw']}/{len(rows)} "
              f"({s['raw_true']}) | {s['calibrated']}/{len(rows)} ({s['calibrated_true']}) |",
              flush=True)


if __name__ == "__main__":
    main()
