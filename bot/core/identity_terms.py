"""Does a message refer to people by identity? The target check behind the ``identity_attack`` label.

Layer: ``bot.core``. Standard library only (plus the core's own modules).

An identity attack is, in Jigsaw's definition that detoxify's ``identity_attack`` label follows, "a negative or
hateful comment targeting someone because of their identity". A message that names no identity at all (no group
noun or adjective, no slur, no othering phrase such as "you people") cannot be one, whatever the model says: on
real chat the model's ``identity_attack`` head also fires on odd short strings ("Re 21e8", "She aite", "Komodo World
is a victim"). The policy's ``[identity_target]`` section uses :func:`identity_reference` to hold such messages to
a much higher bar (see ``bot/config/default.toml``); the score itself is kept unchanged in the verdict.

The lexicon below is the project's own, grouped by the protected characteristics of Discord's hateful-conduct
policy and of the Jigsaw identity categories: gender and gender identity, sexual orientation, race and ethnicity,
national origin and migration, religion, disability and health, age, plus common slurs and othering phrases. It is
deliberately broad (a false "has a target" only means the model's score decides, as without the check); matching
is word-aware on the normalised text (:func:`bot.core.normalize.contains_term`), so leetspeak, look-alike letters
and spacing are folded, and a trailing ``*`` makes the last word a prefix.
"""

from __future__ import annotations

from functools import lru_cache

from bot.core.normalize import Normalized, contains_term

#: Gender, sex and gender identity (misgendering names a gendered noun far more often than a pronoun alone).
GENDER = (
    "woman", "women", "womens", "womans", "girl", "girls", "female*", "lady", "ladies", "man", "men", "mens", "male",
    "males", "boy", "boys", "guy", "guys", "dude", "dudes", "sir", "ma'am", "maam", "madam", "gentleman", "gentlemen",
    "wife", "wives", "mother", "mothers", "mom", "moms", "mum", "mums", "feminist*", "feminism", "gender*", "pronoun*",
    "trans", "transgender*", "transsexual*", "transwom*", "transm*n", "transphob*", "nonbinary", "non binary",
    "non-binary", "enby", "enbies", "genderqueer", "genderfluid", "intersex", "cis", "cisgender*", "misgender*",
    "drag queen*", "sex", "sexes", "misogyn*", "sexist*", "sexism",
)
#: Sexual orientation.
ORIENTATION = (
    "gay", "gays", "lesbian*", "bi", "bisexual*", "pansexual*", "asexual*", "queer*", "homosexual*", "heterosexual*",
    "straight", "lgbt*", "lgb", "glbt", "homophob*", "pride",
)
#: Race, ethnicity and colour.
RACE = (
    "black", "blacks", "white", "whites", "brown", "asian*", "african*", "arab*", "latino*", "latina*", "latinx",
    "hispanic*", "mexican*", "chinese", "japanese", "korean*", "indian*", "native*", "indigenous", "aboriginal*",
    "roma", "romani", "gypsy", "gypsies", "jew", "jews", "jewish", "judaism", "semit*", "antisemit*", "caucasian*",
    "ethnic*", "race", "races", "racial*", "racis*", "minorit*", "poc", "bipoc", "people of colour", "people of color",
    "mixed race", "slav", "slavs", "slavic", "persian*", "turk", "turks", "turkish", "kurd*", "filipino*", "vietnamese", "thai",
    "pakistani*", "bengali*", "sikh*", "tamil*", "inuit", "aborigine*", "pacific islander*", "afro*",
)
#: National origin, migration and citizenship; country names as they come up in chat.
ORIGIN = (
    "immigrant*", "migrant*", "migration", "refugee*", "foreigner*", "foreign", "asylum", "illegals", "alien*",
    "citizen*", "nationalit*", "nation", "nations", "country", "countries", "your country", "go back", "third world",
    "american*", "america", "canadian*", "british", "english", "irish", "scottish", "welsh", "french", "german*",
    "dutch", "italian*", "spanish", "portuguese", "polish", "pole", "poles", "russian*", "russia", "ukrainian*",
    "romanian*", "hungarian*", "greek*", "albanian*", "serb*", "croat*", "bosnian*", "swede*", "swedish", "norwegian*",
    "danish", "finn*", "european*", "europe", "africa", "nigerian*", "somali*", "ethiopian*", "kenyan*", "egyptian*",
    "moroccan*", "algerian*", "syrian*", "iraqi*", "iranian*", "afghan*", "israeli*", "palestin*", "lebanese",
    "saudi*", "indonesian*", "malaysian*", "china", "india", "japan", "korea", "pakistan", "bangladesh*", "brazil*",
    "argentin*", "colombian*", "venezuelan*", "cuban*", "haitian*", "jamaican*", "puerto rican*", "australian*",
    "aussie*", "kiwi*", "chinaman", "mexico", "israel", "iran", "turkey", "ukraine", "nigeria",
)
#: Religion and belief.
RELIGION = (
    "muslim*", "moslem*", "islam*", "christian*", "christianity", "catholic*", "protestant*", "evangelical*",
    "hindu*", "hinduism", "buddhis*", "atheis*", "mormon*", "religion*", "religious", "church*", "mosque*",
    "synagogue*", "temple*", "jihad*", "sharia", "quran", "koran", "bible*", "zionis*",
)
#: Disability, health and neurodivergence.
DISABILITY = (
    "disabled", "disabilit*", "disable", "autis*", "aspie*", "adhd", "deaf", "blind", "wheelchair*", "mute",
    "mentally ill", "mental illness", "mental health", "schizo*", "bipolar", "down syndrome", "downs", "handicap*",
    "dwarf*", "midget*", "amputee*", "paralys*", "paralyz*", "special needs", "neurodivergent", "crazy people",
)
#: Age groups.
AGE = ("old people", "elderly", "senior*", "boomer*", "old folks", "old man", "old woman", "old lady", "zoomer*", "millennial*")
#: Slurs and slur-like group insults (also catch reclaimed uses: the model decides those).
SLURS = (
    "tranny", "trannies", "trannys", "trannie", "troon*", "shemale*", "faggot*", "fag", "fags", "faggy", "dyke*", "homo",
    "homos", "poof*", "nigger*", "nigga*", "niggaz", "negro*", "coon*", "jigaboo*", "kike*", "yid", "yids", "hebe*",
    "chink*", "gook*", "slant*", "spic", "spics", "beaner*", "wetback*", "raghead*", "towelhead*", "muzzie*",
    "sandnigger*", "paki", "pakis", "pajeet*", "gypo*", "pikey*", "redskin*", "retard*", "tard", "tards", "spastic*",
    "spaz", "cripple*", "femoid*", "foid*", "bitch*", "slut*", "whore*", "cunt*", "hoe", "hoes", "wog", "wogs",
    "dago*", "wop", "wops", "kraut*", "gringo*", "cracker*", "honky", "honkies", "zipperhead*", "golliwog*",
    "subhuman*", "untermensch*", "mongoloid*", "mong", "mongs", "rapefugee*", "camel fucker*", "camelfucker*",
    "goat fucker*", "goatfucker*", "sand monkey*", "porch monkey*", "jungle bunn*", "cotton picker*", "shitskin*",
    "feminazi*", "trannie*", "ladyboy*", "he-she", "heshe", "it's a man", "zog",
)
#: Othering phrases that stand in for a group.
OTHERING = (
    "you people", "your kind", "their kind", "these people", "those people", "that kind", "your lot", "their lot",
    "their race", "your race", "their people", "your people", "breed*", "inbred*", "groomer*", "people like you",
    "people like him", "people like her", "people like them", "people like that", "you lot", "your sort",
)

#: Every category, for reasons and tests.
CATEGORIES: dict[str, tuple[str, ...]] = {
    "gender": GENDER,
    "orientation": ORIENTATION,
    "race": RACE,
    "origin": ORIGIN,
    "religion": RELIGION,
    "disability": DISABILITY,
    "age": AGE,
    "slur": SLURS,
    "othering": OTHERING,
}


@lru_cache(maxsize=1)
def _ordered() -> tuple[tuple[str, str], ...]:
    return tuple((cat, term) for cat, terms in CATEGORIES.items() for term in terms)


#: Shortest lexicon word (without its ``*``) whose one-letter misspellings count (shorter ones are too ambiguous:
#: "men" minus a letter is "me"); and shortest word that counts inside a run-together token ("gaypeople").
FUZZY_MIN_LEN = 5
JOINED_MIN_LEN = 3
#: Words that evasions run into an identity word, after it ("blackpeople", "gaymen") and before it ("hategays",
#: "killalljews"): a closed list, so that "transaction" or "disgrace" never read as identity words.
JOINERS_AFTER = frozenset((
    "people", "peoples", "folk", "folks", "person", "persons", "men", "man", "women", "woman", "guys", "guy", "girls",
    "girl", "boys", "boy", "kids", "kid", "lives", "are", "is", "r", "should", "all", "everywhere", "scum", "trash",
))
JOINERS_BEFORE = ("killall", "hateall", "hate", "kill", "all", "the", "those", "these", "fuck", "fucking", "stupid",
                  "dirty", "filthy", "bloody", "damn", "no", "ban")


def _variants(word: str) -> set[str]:
    """``word`` with one letter dropped (not the first) or two neighbours swapped: the evasions of HateCheck's
    ``spell_char_del`` / ``spell_char_swap`` families and of the normaliser's own noise tests."""
    out = {word[:i] + word[i + 1:] for i in range(1, len(word))}
    out |= {word[:i] + word[i + 1] + word[i] + word[i + 2:] for i in range(len(word) - 1) if word[i] != word[i + 1]}
    out.discard(word)
    return out


@lru_cache(maxsize=1)
def _fuzzy_tables() -> tuple[dict[str, str], dict[str, str], tuple[tuple[str, str], ...]]:
    """``(exact misspelling -> entry, misspelled prefix -> entry, (word, entry) for run-together matching)`` over
    the single-word lexicon entries (multi-word ones are matched run together by :func:`contains_term` already)."""
    exact: dict[str, str] = {}
    prefix: dict[str, str] = {}
    joined: list[tuple[str, str]] = []
    for cat, term in _ordered():
        word = term.rstrip("*")
        if not word.isalpha():
            continue
        entry = f"{cat}:{term}"
        if len(word) >= JOINED_MIN_LEN:
            joined.append((word, entry))
        if len(word) >= FUZZY_MIN_LEN:
            for v in _variants(word):
                (prefix if term.endswith("*") else exact).setdefault(v, entry)
    return exact, prefix, tuple(sorted(joined, key=lambda p: -len(p[0])))


def fuzzy_identity_reference(norm: Normalized) -> str | None:
    """An identity term written with one evasion the normaliser does not undo, as ``"category:term~"``, or ``None``.

    Two kinds, on every form of every token (:attr:`Normalized.index`): a lexicon word of 5+ letters with one letter
    dropped or two neighbours swapped (``"homosexuls"``, ``"wmoen"``), and a lexicon word of 3+ letters run together
    with one of the words evasions join to it (:data:`JOINERS_AFTER`, :data:`JOINERS_BEFORE`: ``"gaypeople"``,
    ``"hatemuslims"``). Deliberately broad like the lexicon (a false hit only lets the model's score decide, as
    without the check), but ``"transaction"`` and ``"disgrace"`` never match: the joined words are a closed list.
    Call it only when :func:`identity_reference` found nothing.
    """
    exact, prefix, joined = _fuzzy_tables()
    for form in norm.index:
        if not form.isalpha():
            continue
        if form in exact:
            return exact[form] + "~"
        for k in range(FUZZY_MIN_LEN - 1, len(form) + 1):
            if form[:k] in prefix:
                return prefix[form[:k]] + "~"
        for word, entry in joined:
            if len(form) < len(word) + 2:
                continue
            if form.startswith(word) and form[len(word):] in JOINERS_AFTER:
                return entry + "~"
            head = next((j for j in JOINERS_BEFORE if form.startswith(j)), None)
            if head is not None and (form[len(head):] == word or (entry.endswith("*") and form[len(head):].startswith(word))):
                return entry + "~"
    return None


def identity_reference(norm: Normalized, extra_terms: tuple[str, ...] = (), *, fuzzy: bool = False) -> str | None:
    """The first identity term a message uses, as ``"category:term"``, or ``None`` when it names no identity.

    Args:
        norm: ``bot.core.normalize.normalize(text)`` of the message.
        extra_terms: More terms that count as a reference (the server's own, e.g. a local slur); category
            ``"server"``.
        fuzzy: Also accept a misspelt or run-together lexicon word (:func:`fuzzy_identity_reference`, marked
            with a trailing ``~``) when no exact term matches.

    Returns:
        For example ``"gender:women"`` or ``"slur:tranny"`` (the lexicon entry as written, with its ``*``), or
        ``None``. Word-aware: ``"transaction"`` does not contain ``"trans"``; ``"jewel"`` does not contain ``"jew"``.
    """
    if not norm.tokens:
        return None
    for cat, term in _ordered():
        if contains_term(norm, term):
            return f"{cat}:{term}"
    for term in extra_terms:
        if contains_term(norm, term):
            return f"server:{term}"
    return fuzzy_identity_reference(norm) if fuzzy else None
