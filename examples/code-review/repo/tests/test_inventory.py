from inventory import total_quantity


def test_total_counts_every_line_item() -> None:
    items = [{"sku": "apple", "quantity": 2}, {"sku": "pear", "quantity": 3}]
    assert total_quantity(items) == 5


def test_an_empty_order_has_no_units() -> None:
    assert total_quantity([]) == 0
