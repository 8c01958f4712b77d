"""English word forms a question uses where code names a related form.

A question is typed as a person types it, "how is the cache key built", "what are the kept
entries"; code says `build_key`, `keep`. FTS5's porter stemmer folds regular forms (`parsed`,
`parsing` -> `pars`), not irregular ones: `built` never meets `build`, nor `chosen` `choose`.
`related_forms` gives the forms a question word stands for, searched beside the word itself
(search/code.py `search_terms`).

Left out: forms that are as often another word (`left`, `lit`, `ground`, `wound`, `bore`,
`rose`, `fell`, `saw`, `lay`, `spat`, `felt`; in code `led` and `hid` are devices, and `go`
is a language), forms that are stop words already (`made`,
`found`, `done`, `got`, `seen`), and forms that are the base itself (`set`, `put`, `read`,
`split`).
"""

from __future__ import annotations

import re

_FORMS = """
    arisen:arise awoke:awake awoken:awake beaten:beat became:become begun:begin began:begin
    bent:bend bitten:bite bled:bleed blew:blow blown:blow broke:break broken:break bred:breed
    brought:bring built:build bought:buy caught:catch chose:choose chosen:choose came:come
    crept:creep dealt:deal dug:dig drew:draw drawn:draw drove:drive driven:drive drank:drink
    drunk:drink ate:eat eaten:eat fed:feed fought:fight fled:flee flew:fly flown:fly
    forbade:forbid forbidden:forbid forgave:forgive forgiven:forgive forgot:forget
    forgotten:forget froze:freeze frozen:freeze gave:give given:give
    grew:grow grown:grow hung:hang heard:hear hidden:hide held:hold kept:keep
    knew:know known:know leapt:leap lent:lend lost:lose meant:mean met:meet
    mistaken:mistake overrode:override overridden:override ran:run rang:ring rung:ring
    rebuilt:rebuild rewrote:rewrite rewritten:rewrite rode:ride ridden:ride risen:rise
    sought:seek sold:sell sent:send shook:shake shaken:shake shone:shine shot:shoot
    shrank:shrink shrunk:shrink sang:sing sung:sing sank:sink sunk:sink slept:sleep slid:slide
    sped:speed spent:spend spoke:speak spoken:speak spun:spin stood:stand stole:steal
    stolen:steal stuck:stick stung:sting strove:strive struck:strike swept:sweep swore:swear
    sworn:swear swung:swing taught:teach took:take taken:take told:tell thought:think
    threw:throw thrown:throw tore:tear torn:tear understood:understand undid:undo undone:undo
    upheld:uphold woke:wake woken:wake wore:wear worn:wear wept:weep withdrew:withdraw
    withdrawn:withdraw withheld:withhold wrote:write written:write
"""
# Regular forms porter parts from their base: it undoubles a final consonant after -ing and
# -ed (`adding` -> `ad`) but keeps the base's (`add` -> `add`), so "adding" never met `add`.
_UNDOUBLED = "adding:add added:add erred:err erring:err"
BASE_FORMS: dict[str, str] = dict(pair.split(":") for pair in (_FORMS + _UNDOUBLED).split())


# Adjectives porter leaves apart from their verb (`growable` -> `growabl`, `grow` -> `grow`):
# the stem, and the stem with an `e` (`printable` -> `print`, `printe`). A form no chunk holds adds
# nothing to BM25 (an ORed term without rows). Nouns in -tion, -sion, -ment, -ure and agent
# nouns in -er / -or were tried the same way and cost more ranks than they gained
# (bench/README.md, 2026-11-27 20:21 section).
_ADJECTIVE_SUFFIXES = ("able", "ible")
# Adjectives whose stem is another word or none (`enable` -> `en`, `portable` -> `port`,
# `variable` -> `vari`, which porter makes `vary`): no form.
_NOT_DERIVED_TEXT = """
    enable disable unable stable unstable table variable variables portable mutable immutable
    notable capable incapable possible impossible visible invisible probable suitable terrible
    horrible responsible eligible flexible sensible feasible plausible audible tangible edible
    cable
"""
_NOT_DERIVED = frozenset(_NOT_DERIVED_TEXT.split())
_PLURALS = {"children": "child", "indices": "index", "matrices": "matrix", "vertices": "vertex"}
MIN_BASE = 4  # a shorter stem is a prefix of too many words, or none (`usable` -> `us`)


# British and American spellings, which porter keeps apart (`initialise` -> `initialis`,
# `initialize` -> `initi`; `colour`, `color`): code is written in either (tmux says `colour`,
# most code `color`), and so is a question. Each direction by rule where the rule is safe, by
# list where the ending is too common (`-or`: error, vendor).
_ISE = re.compile(r"(?<=[a-z]{3}i)([sz])(e|ed|es|ing|ation|ations|er|ers)$")
_YSE = re.compile(r"(?<=[a-z]{3}y)([sz])(e|ed|es|ing|er|ers)$")
_OUR_TEXT = "color behavior favor neighbor honor flavor labor humor armor vapor rumor harbor"
_OUR_WORDS = frozenset(_OUR_TEXT.split())
_PAIRS_TEXT = """
    centre:center metre:meter litre:liter fibre:fiber theatre:theater licence:license
    defence:defense offence:offense pretence:pretense catalogue:catalog dialogue:dialog
    analogue:analog grey:gray programme:program
"""
_PAIRS = dict(pair.split(":") for pair in _PAIRS_TEXT.split())
_PAIRS.update({american: british for british, american in list(_PAIRS.items())})


def spelling_variants(word: str) -> list[str]:
    """The other spelling of a word British and American English write apart."""
    found = [_PAIRS[word]] if word in _PAIRS else []
    for pattern in (_ISE, _YSE):
        match = pattern.search(word)
        if match:
            other = "z" if match.group(1) == "s" else "s"
            found.append(word[: match.start(1)] + other + match.group(2))
    stem = word.removesuffix("s")
    if stem.endswith("our") and len(stem) >= 5:
        found.append(stem[:-3] + "or" + word[len(stem) :])
    elif stem in _OUR_WORDS:
        found.append(stem[:-2] + "our" + word[len(stem) :])
    return found


def related_forms(word: str) -> list[str]:
    """Forms of `word` code may use instead: an irregular verb's base (`built` -> `build`), an
    irregular plural's singular (`indices` -> `index`), an adjective's verb (`growable` ->
    `grow`), the other spelling (`colour` -> `color`, `initialize` -> `initialise`)."""
    found = [base for base in (BASE_FORMS.get(word), _PLURALS.get(word)) if base]
    found += spelling_variants(word)
    for suffix in _ADJECTIVE_SUFFIXES:
        if word.endswith(suffix) and word not in _NOT_DERIVED:
            stem = word[: -len(suffix)]
            found += [form for form in (stem, stem + "e") if len(form) >= MIN_BASE]
    return [form for form in dict.fromkeys(found) if form != word]
