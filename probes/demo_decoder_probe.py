"""Example python probe: stream tokens through a column's ``decoder.Decoder`` and return the text.

Runs inside the column's subprocess with the column's tree first on sys.path; ``UNDER_TEST``
names the modules whose files must come from that tree (the module path proof).
The hidden stop string " delta epsilon" arrives split across two tokens; text that survives
past it is a leak.
"""

UNDER_TEST = ["decoder"]
TOKENS = ["hi", " delta", " epsilon", " zeta"]
STOP = " delta epsilon"


def run(min_tokens: int) -> str:
    from decoder import Decoder

    d = Decoder(stop=[STOP], min_tokens=min_tokens)
    for tok in TOKENS:
        if d.step(tok):
            break
    return d.text
