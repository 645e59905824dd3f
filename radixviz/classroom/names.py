"""Students' names that cannot pass for one another (Unicode's look-alikes, UTS #39 in small).

A name a student types is shown on the teacher's page and in the CSV, so two rows must
never read the same. ``shown_name`` is what is kept: NFKC-normalized (a fullwidth ``Ａ`` is
``A``, a ligature its letters), without format characters (category Cf: zero-width spaces
and joiners, the bidi controls that reverse what follows) nor the few letters that draw
nothing (Hangul fillers, the blank braille cell). A name mixing scripts (a Cyrillic ``А`` in
a Latin ``Alice``) is refused, as UTS #39's "highly restrictive" level does: one script,
or Latin with the scripts written together in Japanese, Chinese or Korean.
``name_keys`` is what two names are compared by: the shown name with the letters of Greek
and Cyrillic that are drawn like Latin ones mapped to those (so an all-Cyrillic "Аӏісе" is
Alice), ``I``, ``1`` and ``|`` to ``l`` and ``0`` to ``O``, and case-folded.

Standard library only (``unicodedata``): the maintained confusables table would be a new
dependency for a classroom's roster.
"""
from __future__ import annotations

import unicodedata

# letters that draw nothing but are not format characters
_INVISIBLE = dict.fromkeys(map(ord, "\u115f\u1160\u3164\uffa0\u2800\u034f"))
# scripts that may be mixed in one name (Japanese, Chinese with Bopomofo, Korean), with Latin
_TOGETHER = ({"LATIN", "HAN", "HIRAGANA", "KATAKANA"}, {"LATIN", "HAN", "BOPOMOFO"}, {"LATIN", "HAN", "HANGUL"})
# drawn like a Latin letter (Cyrillic, Greek, and the digits and bar a font confuses with letters)
_LOOKS_LATIN = str.maketrans(
    "АВСЕНІЈКМОРЅТХУаеһіјӏорѕсуххԁԛԝ" "ΑΒΕΗΙΚΜΝΟΡΤΥΧΖοκνρτυχιαϲ" "I1|0",
    "ABCEHIJKMOPSTXYaehijlopscyxxdqw" "ABEHIKMNOPTYXZoKvptuxiac" "lllO")


class NameRefused(ValueError):
    """A name that would pass for another's or cannot be shown: one line to show."""


def shown_name(typed: str) -> str:
    """``typed`` as the class will show it (NFKC, no format characters nor invisible
    letters); NameRefused when it mixes scripts."""
    name = unicodedata.normalize("NFKC", typed)
    name = "".join(c for c in name if unicodedata.category(c) != "Cf").translate(_INVISIBLE)
    scripts = {script for script in map(script_of, name) if script is not None}
    if len(scripts) > 1 and not any(scripts <= allowed for allowed in _TOGETHER):
        raise NameRefused("write your name in one alphabet (it mixes " + " and ".join(sorted(
            s.title() for s in scripts)) + " letters)")
    return name


def name_keys(name: str) -> set:
    """What two names are compared by: names sharing a key read the same on the teacher's
    page. Two keys, the look-alikes mapped before and after case-folding, so that ``ALICE``
    meets ``Alice`` and ``Ian`` meets ``lan`` (a capital I is drawn as a small l)."""
    name = unicodedata.normalize("NFKC", name)
    return {_latin(name).casefold(), _latin(name.casefold()).casefold()}


def _latin(text: str) -> str:
    # twice: a Cyrillic І becomes I, then l
    return text.translate(_LOOKS_LATIN).translate(_LOOKS_LATIN)


def script_of(char: str) -> str | None:
    """The script of a letter (from its Unicode name: LATIN, CYRILLIC, HAN, ...); None for
    what every script shares (digits, punctuation, spaces, marks, symbols)."""
    if not unicodedata.category(char).startswith("L"):
        return None
    word = unicodedata.name(char, "UNKNOWN").split()[0]
    if word in ("CJK", "IDEOGRAPHIC"):
        return "HAN"
    if word in ("MODIFIER", "KATAKANA-HIRAGANA", "HALFWIDTH", "FULLWIDTH"):
        return None
    return word
