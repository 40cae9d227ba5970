"""What to cite for a result: the library, the suite, and each agent's paper, as BibTeX.

* :data:`BIBLIOGRAPHY` -- the papers of the built-in agents, by BibTeX key. Every
  built-in agent class declares its paper in ``REFERENCE``: one key of it, several (a
  tuple: ``fejer-bgd`` cites the estimator's paper and the setting's), or None (random
  play, a baseline). Pages are given where they were checked against the publisher's
  record, else left out.
* A user's agent may declare ``REFERENCE`` too: a key of :data:`BIBLIOGRAPHY`, a BibTeX
  entry of its own (a string starting with ``@``), or a tuple of those
  (:func:`agent_entries` checks an entry is one well-formed BibTeX entry before printing
  it: one ``@type{key,`` head and balanced braces).
* :func:`library_entry` -- ``@software`` for bco_gym with its version, from the fields of
  ``CITATION.cff`` (:data:`LIBRARY`; a test holds the two equal, so an installed wheel,
  which has no ``CITATION.cff``, cites the same thing).
* :func:`suite_entry` -- ``@misc`` for a benchmark suite: its name (which carries its
  version), the reference archive's digest, the evaluation seeds.

``bco-gym cite DIR`` (:func:`bco_gym.reports.export.cite_text`) prints them for a bench
directory.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

#: The library as ``CITATION.cff`` describes it (title, authors, licence, the paper it
#: implements first); the version is ``bco_gym.__version__``.
LIBRARY = {
    "title": "bco_gym: bandit convex optimization as Gymnasium environments",
    "author": "{The bco_gym authors}",
    "license": "MIT",
}

#: BibTeX key -> (entry type, fields). The built-in agents' ``REFERENCE`` name these keys.
BIBLIOGRAPHY: dict[str, tuple[str, dict[str, str]]] = {
    "garber2020improved": (
        "inproceedings",
        {
            "author": "Garber, Dan and Kretzu, Ben",
            "title": "Improved Regret Bounds for Projection-free Bandit Convex Optimization",
            "booktitle": "Proceedings of the Twenty Third International Conference on "
            "Artificial Intelligence and Statistics (AISTATS)",
            "series": "Proceedings of Machine Learning Research",
            "volume": "108",
            "pages": "2196--2206",
            "publisher": "PMLR",
            "year": "2020",
        },
    ),
    "garber2022new": (
        "inproceedings",
        {
            "author": "Garber, Dan and Kretzu, Ben",
            "title": "New Projection-free Algorithms for Online Convex Optimization with "
            "Adaptive Regret Guarantees",
            "booktitle": "Proceedings of Thirty Fifth Conference on Learning Theory (COLT)",
            "series": "Proceedings of Machine Learning Research",
            "volume": "178",
            "publisher": "PMLR",
            "year": "2022",
        },
    ),
    "flaxman2005online": (
        "inproceedings",
        {
            "author": "Flaxman, Abraham D. and Kalai, Adam Tauman and McMahan, H. Brendan",
            "title": "Online Convex Optimization in the Bandit Setting: Gradient Descent "
            "without a Gradient",
            "booktitle": "Proceedings of the Sixteenth Annual ACM-SIAM Symposium on Discrete "
            "Algorithms (SODA)",
            "pages": "385--394",
            "year": "2005",
        },
    ),
    "agarwal2010optimal": (
        "inproceedings",
        {
            "author": "Agarwal, Alekh and Dekel, Ofer and Xiao, Lin",
            "title": "Optimal Algorithms for Online Convex Optimization with Multi-Point "
            "Bandit Feedback",
            "booktitle": "Proceedings of the 23rd Conference on Learning Theory (COLT)",
            "pages": "28--40",
            "year": "2010",
        },
    ),
    "shamir2017optimal": (
        "article",
        {
            "author": "Shamir, Ohad",
            "title": "An Optimal Algorithm for Bandit and Zero-Order Convex Optimization "
            "with Two-Point Feedback",
            "journal": "Journal of Machine Learning Research",
            "volume": "18",
            "number": "52",
            "pages": "1--11",
            "year": "2017",
        },
    ),
    "chen2019projection": (
        "inproceedings",
        {
            "author": "Chen, Lin and Zhang, Mingrui and Karbasi, Amin",
            "title": "Projection-Free Bandit Convex Optimization",
            "booktitle": "Proceedings of the Twenty-Second International Conference on "
            "Artificial Intelligence and Statistics (AISTATS)",
            "series": "Proceedings of Machine Learning Research",
            "volume": "89",
            "pages": "2047--2056",
            "publisher": "PMLR",
            "year": "2019",
        },
    ),
    "hazan2012projection": (
        "inproceedings",
        {
            "author": "Hazan, Elad and Kale, Satyen",
            "title": "Projection-free Online Learning",
            "booktitle": "Proceedings of the 29th International Conference on Machine "
            "Learning (ICML)",
            "pages": "521--528",
            "year": "2012",
        },
    ),
    "zinkevich2003online": (
        "inproceedings",
        {
            "author": "Zinkevich, Martin",
            "title": "Online Convex Programming and Generalized Infinitesimal Gradient Ascent",
            "booktitle": "Proceedings of the 20th International Conference on Machine "
            "Learning (ICML)",
            "pages": "928--936",
            "year": "2003",
        },
    ),
    "saha2011improved": (
        "inproceedings",
        {
            "author": "Saha, Ankan and Tewari, Ambuj",
            "title": "Improved Regret Guarantees for Online Smooth Convex Optimization with "
            "Bandit Feedback",
            "booktitle": "Proceedings of the Fourteenth International Conference on "
            "Artificial Intelligence and Statistics (AISTATS)",
            "series": "Proceedings of Machine Learning Research",
            "volume": "15",
            "pages": "636--642",
            "publisher": "PMLR",
            "year": "2011",
        },
    ),
    "suggala2021efficient": (
        "inproceedings",
        {
            "author": "Suggala, Arun Sai and Ravikumar, Pradeep and Netrapalli, Praneeth",
            "title": "Efficient Bandit Convex Optimization: Beyond Linear Losses",
            "booktitle": "Proceedings of Thirty Fourth Conference on Learning Theory (COLT)",
            "series": "Proceedings of Machine Learning Research",
            "volume": "134",
            "publisher": "PMLR",
            "year": "2021",
        },
    ),
    "zhao2021bandit": (
        "article",
        {
            "author": "Zhao, Peng and Wang, Guanghui and Zhang, Lijun and Zhou, Zhi-Hua",
            "title": "Bandit Convex Optimization in Non-stationary Environments",
            "journal": "Journal of Machine Learning Research",
            "volume": "22",
            "number": "125",
            "year": "2021",
        },
    ),
    "raffin2021stable": (
        "article",
        {
            "author": "Raffin, Antonin and Hill, Ashley and Gleave, Adam and Kanervisto, "
            "Anssi and Ernestus, Maximilian and Dormann, Noah",
            "title": "Stable-Baselines3: Reliable Reinforcement Learning Implementations",
            "journal": "Journal of Machine Learning Research",
            "volume": "22",
            "number": "268",
            "pages": "1--8",
            "year": "2021",
        },
    ),
    "schulman2017proximal": (
        "misc",
        {
            "author": "Schulman, John and Wolski, Filip and Dhariwal, Prafulla and Radford, "
            "Alec and Klimov, Oleg",
            "title": "Proximal Policy Optimization Algorithms",
            "eprint": "1707.06347",
            "archiveprefix": "arXiv",
            "year": "2017",
        },
    ),
    "mnih2016asynchronous": (
        "inproceedings",
        {
            "author": "Mnih, Volodymyr and Badia, Adri{\\`a} Puigdom{\\`e}nech and Mirza, "
            "Mehdi and Graves, Alex and Lillicrap, Timothy and Harley, Tim and Silver, David "
            "and Kavukcuoglu, Koray",
            "title": "Asynchronous Methods for Deep Reinforcement Learning",
            "booktitle": "Proceedings of the 33rd International Conference on Machine "
            "Learning (ICML)",
            "series": "Proceedings of Machine Learning Research",
            "volume": "48",
            "publisher": "PMLR",
            "year": "2016",
        },
    ),
    "haarnoja2018soft": (
        "inproceedings",
        {
            "author": "Haarnoja, Tuomas and Zhou, Aurick and Abbeel, Pieter and Levine, Sergey",
            "title": "Soft Actor-Critic: Off-Policy Maximum Entropy Deep Reinforcement "
            "Learning with a Stochastic Actor",
            "booktitle": "Proceedings of the 35th International Conference on Machine "
            "Learning (ICML)",
            "series": "Proceedings of Machine Learning Research",
            "volume": "80",
            "publisher": "PMLR",
            "year": "2018",
        },
    ),
    "fujimoto2018addressing": (
        "inproceedings",
        {
            "author": "Fujimoto, Scott and van Hoof, Herke and Meger, David",
            "title": "Addressing Function Approximation Error in Actor-Critic Methods",
            "booktitle": "Proceedings of the 35th International Conference on Machine "
            "Learning (ICML)",
            "series": "Proceedings of Machine Learning Research",
            "volume": "80",
            "publisher": "PMLR",
            "year": "2018",
        },
    ),
}

_HEAD = re.compile(r"@\s*([A-Za-z]+)\s*\{\s*([^\s,{}()\"#%'=]+)\s*,")
#: The longest user entry printed (a REFERENCE is a citation, not a document).
LONGEST_ENTRY = 10_000


def render(key: str, kind: str, fields: Mapping[str, str]) -> str:
    """One BibTeX entry: ``@kind{key,`` then a ``name = {value}`` line per field."""
    width = max(len(name) for name in fields)
    lines = [f"@{kind}{{{key},"]
    lines += [f"  {name.ljust(width)} = {{{value}}}," for name, value in fields.items()]
    return "\n".join([*lines, "}"])


def bibliography_entry(key: str) -> str:
    """:data:`BIBLIOGRAPHY`'s entry ``key`` as BibTeX (KeyError for an unknown key)."""
    kind, fields = BIBLIOGRAPHY[key]
    return render(key, kind, fields)


def declared(factory: Any) -> tuple[str, ...]:
    """What ``factory`` (an agent class or factory) declares in ``REFERENCE``, as a tuple
    (empty for None or no attribute); TypeError for anything but a string or a tuple or
    list of strings."""
    value = getattr(factory, "REFERENCE", None)
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, (tuple, list)) and all(isinstance(item, str) for item in value):
        return tuple(value)
    raise TypeError(
        f"REFERENCE of {getattr(factory, '__qualname__', factory)!r} is "
        f"{type(value).__name__}; allowed: a BibTeX key of bco_gym.reports.citations.BIBLIOGRAPHY, "
        "a BibTeX entry ('@article{key, ...}'), a tuple of those, or None"
    )


def entry_problem(text: str) -> str | None:
    """Why ``text`` is not one well-formed BibTeX entry (None when it is): it must start
    with ``@type{key,``, close every brace it opens and end at its last brace."""
    body = text.strip()
    if len(body) > LONGEST_ENTRY:
        return f"longer than {LONGEST_ENTRY:,} characters"
    if not _HEAD.match(body):
        return "it does not start with @type{key,"
    depth = 0
    for index, char in enumerate(body):  # BibTeX counts every brace, escaped or not
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0 and body[index + 1 :].strip():
                return "text follows the entry's closing brace"
    if depth != 0:
        return "a brace is not closed"
    return None


def entry_key(text: str) -> str:
    """The key of a well-formed BibTeX entry (:func:`entry_problem` is None)."""
    found = _HEAD.match(text.strip())
    if found is None:
        raise ValueError(f"not a BibTeX entry: {text[:60]!r}")
    return found.group(2)


def agent_entries(factory: Any) -> tuple[list[tuple[str, str]], list[str]]:
    """(entries, problems) of what ``factory`` declares: entries as (key, BibTeX text),
    problems one line each (an unknown key, a malformed entry), never raised."""
    entries: list[tuple[str, str]] = []
    problems: list[str] = []
    try:
        items = declared(factory)
    except TypeError as error:
        return [], [str(error)]
    for item in items:
        text = item.strip()
        if text.startswith("@"):
            problem = entry_problem(text)
            if problem is None:
                entries.append((entry_key(text), text))
            else:
                problems.append(f"its REFERENCE entry is not printed: {problem}")
        elif text in BIBLIOGRAPHY:
            entries.append((text, bibliography_entry(text)))
        else:
            problems.append(
                f"its REFERENCE {one_line(text)[:80]!r} is neither a key of "
                "bco_gym.reports.citations.BIBLIOGRAPHY nor a BibTeX entry"
            )
    return entries, problems


def library_entry(version: str, year: str) -> str:
    """``@software{bco_gym, ...}`` with ``version`` (:data:`LIBRARY`)."""
    fields = {
        "title": LIBRARY["title"],
        "author": LIBRARY["author"],
        "version": version,
        "year": year,
        "license": LIBRARY["license"],
        "note": f"Version {version}",
    }
    return render("bco_gym", "software", fields)


def suite_entry(suite: str, version: str, year: str, details: Iterable[str]) -> str:
    """``@misc{bco_gym_<suite>, ...}``: the suite (its name carries its version) of
    bco_gym ``version``, with ``details`` (the archive's digest, the seeds) in its note;
    every detail is escaped for BibTeX (:func:`bibtex_text`)."""
    key = "bco_gym_" + re.sub(r"[^A-Za-z0-9]+", "_", suite).strip("_")
    fields = {
        "title": f"The {bibtex_text(suite)} benchmark suite of bco_gym",
        "author": LIBRARY["author"],
        "year": year,
        "note": "; ".join([f"bco_gym {version}", *map(bibtex_text, details)]),
    }
    return render(key, "misc", fields)


def one_line(text: object) -> str:
    """``text`` on one line (whitespace runs as one space): safe in a ``%`` comment."""
    return " ".join(str(text).split())


def bibtex_text(text: object) -> str:
    """``text`` inside a BibTeX field: on one line, LaTeX's special characters escaped
    (:func:`latex_text`), so braces stay balanced."""
    return latex_text(text)


_LATEX = {
    "\\": r"\textbackslash{}",
    "{": r"\{",
    "}": r"\}",
    "$": r"\$",
    "&": r"\&",
    "#": r"\#",
    "%": r"\%",
    "_": r"\_",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "|": r"\textbar{}",
}
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def latex_text(text: object) -> str:
    """``text`` (user text: a label, a scenario's title) as LaTeX that prints it as it is,
    in text mode: on one line (whitespace runs as one space), control characters dropped,
    ``\\ { } $ & # % _ ~ ^ < > |`` escaped, so no label can run a command or break the
    table it sits in."""
    shown = _CONTROL.sub("", " ".join(str(text).split()))
    return "".join(_LATEX.get(char, char) for char in shown)


__all__ = [
    "BIBLIOGRAPHY",
    "LIBRARY",
    "agent_entries",
    "bibliography_entry",
    "declared",
    "entry_problem",
    "latex_text",
    "library_entry",
    "render",
    "suite_entry",
]
