"""The second generation of case families (strategies.py, folders.py, cliargs.py, metamorphic.py), apart from
case.generate so that a case number of the first families still rebuilds the same case.

    python -m tests.fuzzing --families new ...   # only these
    python -m tests.fuzzing --families all ...   # both generations
"""

from __future__ import annotations

import random

from .case import FAMILIES, Case, generate, ir_case
from .cliargs import cli_case
from .folders import folder_case
from .metamorphic import same_case
from .seeds import Seed
from .strategies import NEW_TEXT_MUTATORS

NEW_FAMILIES = ("ir2", "folder", "cli", "same")


def generate_new(rng: random.Random, seeds: tuple[Seed, ...], scale: int = 1, family: str | None = None) -> Case:
    """One case of the new families: IR mutated by the new strategies (50%), a hostile capture
    folder (15%), a hostile command line (15%) or a meaning-preserving rewrite whose answer must
    be the original's (20%)."""
    if family in FAMILIES:
        return generate(rng, seeds, scale, family)
    seed = rng.choice(seeds)
    if family is None:
        family = rng.choices(NEW_FAMILIES, weights=(50, 15, 15, 20))[0]
    if family == "folder":
        return folder_case(rng, seed, scale)
    if family == "cli":
        return cli_case(rng, seed, scale)
    if family == "same":
        return same_case(rng, seed)
    return ir_case(rng, seed, scale, [f"seed {seed.name}/{seed.filename}"], NEW_TEXT_MUTATORS)


def generate_any(rng: random.Random, seeds: tuple[Seed, ...], scale: int, generation: str) -> Case:
    """``generation``: ``classic`` (case.generate, the numbering of the earlier runs), ``new`` or ``all``."""
    if generation == "classic" or (generation == "all" and rng.random() < 0.5):
        return generate(rng, seeds, scale)
    return generate_new(rng, seeds, scale)
