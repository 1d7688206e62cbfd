"""The pages' words: one catalogue a language (api/static/i18n/LANG.js), the same keys and the
same blanks in each, every key a page uses found there, none unused, and each page's own
English (`data-t`) the catalogue's."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

STATIC = Path(__file__).parents[2] / "api" / "static"
# A blank may be filled with the word alone or with its article ("on banker", "sur le banquier").
ARTICLED = {"the": "side", "the_sides": "sides"}


def catalogue(code: str) -> dict[str, str]:
    text = (STATIC / "i18n" / f"{code}.js").read_text()
    found = re.search(rf"window\.SabotWords\.{code} = (\{{.*\}});\s*$", text, re.S)
    assert found, f"{code}.js is not one JSON object"
    words: dict[str, str] = json.loads(found.group(1))
    return words


LANGS = sorted(p.stem for p in (STATIC / "i18n").glob("*.js"))


def blanks(text: str) -> set[str]:
    return {ARTICLED.get(name, name) for name in re.findall(r"\{(\w+)\}", text)}


class Texts(HTMLParser):
    """The `data-t` keys of a page with the text each element holds, and its scripts."""

    def __init__(self) -> None:
        super().__init__()
        self.open: list[tuple[str, str]] = []
        self.texts: dict[str, str] = {}
        self.scripts: list[str] = []
        self.langs = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "html":
            self.langs = found.get("data-langs") or ""
        if tag == "script" and found.get("src"):
            self.scripts.append(str(found["src"]))
        if found.get("data-t"):
            self.open.append((tag, str(found["data-t"])))
            self.texts[str(found["data-t"])] = ""

    def handle_data(self, data: str) -> None:
        for _, key in self.open:
            self.texts[key] += data

    def handle_endtag(self, tag: str) -> None:
        if self.open and self.open[-1][0] == tag:
            self.open.pop()


def page(name: str) -> Texts:
    parsed = Texts()
    parsed.feed((STATIC / name).read_text())
    return parsed


def used_keys() -> set[str]:
    """Every key the pages name: `data-t`, `t("…")` and any "ns.key" literal of a namespace the
    catalogues have (keys chosen in a ternary or a table), and their singular forms."""
    names = {key.split(".")[0] for key in catalogue("en") if "." in key}
    found: set[str] = set()
    for script in STATIC.glob("*.js"):
        text = script.read_text()
        found |= set(re.findall(r"(?<![\w.$])t\(\"([^\"]+)\"", text))
        literals = re.findall(r"\"([a-z]+\.[\w.-]+)\"", text)
        found |= {lit for lit in literals if lit.split(".")[0] in names}
    for html in STATIC.glob("*.html"):
        found |= set(page(html.name).texts)
    # a key's singular form ("K-one"), which `t` picks by the language's plural rules
    return found | {f"{key}-one" for key in found if f"{key}-one" in catalogue("en")}


def test_there_are_english_and_french() -> None:
    assert LANGS == ["en", "fr"]


def test_every_catalogue_has_the_same_keys_and_blanks() -> None:
    english = catalogue("en")
    for code in LANGS:
        words = catalogue(code)
        assert set(words) == set(english), code
        for key, text in words.items():
            assert text.strip(), (code, key)
            assert blanks(text) == blanks(english[key]), (code, key, text)


def test_every_key_a_page_uses_exists_and_every_key_is_used() -> None:
    used = used_keys()
    english = set(catalogue("en"))
    assert used - english == set()
    assert english - used == set()


def test_a_page_s_own_words_are_the_english_catalogue_s() -> None:
    english = catalogue("en")
    for html in STATIC.glob("*.html"):
        for key, text in page(html.name).texts.items():
            assert " ".join(text.split()) == english[key], (html.name, key)


def test_the_pages_in_two_languages_load_every_catalogue_before_the_shared_script() -> None:
    offered = {"player.html", "screen.html", "tournament.html"}
    for html in STATIC.glob("*.html"):
        parsed = page(html.name)
        if "/static/common.js" not in parsed.scripts:
            continue
        before = parsed.scripts[:parsed.scripts.index("/static/common.js")]
        if html.name in offered:
            assert parsed.langs.split() == LANGS
            assert before == [f"/static/i18n/{code}.js" for code in LANGS]
        else:  # in English only: common.js's own words come from the English catalogue
            assert parsed.langs == "" and before == ["/static/i18n/en.js"], html.name


def test_the_french_is_the_seeds_vocabulary() -> None:
    """The rules' own words, as the seeds write them: "il prend donc la décision soit de tirer
    soit de rester"; "quand le banquier perd un coup, la main passe"; "faire banco, en
    d'autres termes de faire tout ce qu'il y a en banque"; "il dit : « Je donne. » Il propose,
    de ce fait, aux pontes, une carte supplémentaire"."""
    french = catalogue("fr")
    assert french["phase.betting"] == "Faites vos jeux"
    assert french["event.BettingClosed"] == "rien ne va plus"
    assert (french["side.punter"], french["side.banker"]) == ("ponte", "banquier")
    assert (french["player.draw"], french["player.stand"]) == ("Tirer", "Rester")
    assert "passe la main" in french["event.BankPassed"]
    assert "banco" in french["event.BancoCalled"]
    assert "« je donne »" in french["event.CardOffered"]
