import rewardkit


def test_all_is_sorted_and_complete() -> None:
    names = rewardkit.__all__
    assert names == sorted(names, key=str.lower) or names == sorted(names)
    public = {n for n in dir(rewardkit) if not n.startswith("_") and n[0].isupper() or n == "load_config"}
    assert public <= set(names)
    for name in names:
        assert hasattr(rewardkit, name)
