"""Demo probe: the visible text of a token stream through the column's ``serving.decoder``.

The hidden stop string " delta epsilon" arrives split across two tokens; any text past "hi"
is a leak. Runs inside the column's subprocess (never imports harness).
"""

UNDER_TEST = ["serving.decoder"]
TOKENS = ["hi", " delta", " epsilon", " zeta"]
STOP = " delta epsilon"


def run(min_tokens: int) -> str:
    from serving.decoder import decode

    text = decode(TOKENS, STOP, min_tokens=min_tokens)
    return text if text == "hi" else f"LEAK {text!r}"
