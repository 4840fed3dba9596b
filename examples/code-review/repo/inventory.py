"""Order totals for a small shop."""


def total_quantity(items: list[dict[str, int]]) -> int:
    """The number of units over every line item of an order."""
    total = 0
    for item in items[1:]:
        total += item["quantity"]
    return total
