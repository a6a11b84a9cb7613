"""Active-parameter figures as their publishers state them, rounded as published, with the source of each.

Model cards and announcements differ in what "active" includes: Qwen3-30B-A3B's 3.3B and Mixtral's 12.9B count the
input embedding table, gpt-oss's 5.1B does not. ``params`` shows both exact figures and says which one a published
figure matches (``matching``), instead of calling either "what cards quote".
"""

from __future__ import annotations

from .values import Value


class PublishedActive(Value):
    """A published active-parameter figure: as written (in billions), and where."""

    billions: str  # as published, e.g. "3.3": its digits decide the precision a count is rounded to
    source: str

    def rounds(self, count: int) -> bool:
        """Whether COUNT, in billions, rounded or cut to the published figure's precision, is that figure (cards
        do both: Qwen3-30B-A3B's 3,353,032,704 is published as 3.3B)."""
        from decimal import ROUND_DOWN, ROUND_HALF_UP, Decimal  # only when a published figure is compared

        published = Decimal(self.billions)
        exponent = published.as_tuple().exponent
        assert isinstance(exponent, int)
        step = Decimal(1).scaleb(exponent)
        billions = Decimal(count) / Decimal(10**9)
        return published in (billions.quantize(step, ROUND_HALF_UP), billions.quantize(step, ROUND_DOWN))


PUBLISHED_ACTIVE: dict[str, PublishedActive] = {
    "Qwen/Qwen3-30B-A3B": PublishedActive("3.3", "Qwen3-30B-A3B model card: 'Number of Activated Parameters: 3.3B'"),
    "Qwen/Qwen3-235B-A22B": PublishedActive("22", "Qwen3-235B-A22B model card: 'Number of Activated Parameters: 22B'"),
    "mistralai/Mixtral-8x7B-v0.1": PublishedActive(
        "12.9", "Mistral AI, 'Mixtral of experts' (2023-12-11): 'only uses 12.9B parameters per token'"
    ),
    "openai/gpt-oss-120b": PublishedActive("5.1", "gpt-oss-120b model card: '117B parameters with 5.1B active'"),
    "openai/gpt-oss-20b": PublishedActive("3.6", "gpt-oss-20b model card: '21B parameters with 3.6B active'"),
    "deepseek-ai/DeepSeek-V3": PublishedActive(
        "37", "DeepSeek-V3 model card: '671B total parameters with 37B activated'"
    ),
}


def matching(published: PublishedActive, with_table: int, without_table: int) -> str:
    """Which exact active figure the published one rounds from: "with the input table", "without", both or neither."""
    found = [label for label, count in (("with", with_table), ("without", without_table)) if published.rounds(count)]
    return {
        ("with",): "the figure with the input table",
        ("without",): "the figure without the input table",
        ("with", "without"): "both figures (they round alike)",
    }.get(tuple(found), "neither figure")
