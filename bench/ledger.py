"""The ledger StoredRowsCheck reads (perf-gatling's io.fieldline.perf.verify.StoredRowsCheck), as the
Python load generators write it: one line per connection, username,baseTs,sent,ackedRanges, where
message n of the connection carries ts = baseTs + n and ackedRanges lists the acknowledged n."""


def ranges(numbers):
    """Whole numbers as sorted runs: {0, 1, 2, 5} -> "0-2|5-5"."""
    out, start, prev = [], None, None
    for n in sorted(numbers):
        if start is None:
            start = prev = n
        elif n == prev + 1:
            prev = n
        else:
            out.append(f"{start}-{prev}")
            start = prev = n
    if start is not None:
        out.append(f"{start}-{prev}")
    return "|".join(out)
