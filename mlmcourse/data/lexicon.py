"""The words of the small world: professions, industries, objects, places, and the article rule.

Every word a template can say that is not a name comes from a list here (or from the template's
own text), so the name maker can steer clear of all of them (:func:`lexicon_words`).
"""

from __future__ import annotations

PROFESSIONS = [  # (singular, plural); about a third start with a vowel sound, for a/an
    ("engineer", "engineers"),
    ("architect", "architects"),
    ("accountant", "accountants"),
    ("editor", "editors"),
    ("author", "authors"),
    ("analyst", "analysts"),
    ("inspector", "inspectors"),
    ("economist", "economists"),
    ("actor", "actors"),
    ("teacher", "teachers"),
    ("nurse", "nurses"),
    ("pilot", "pilots"),
    ("farmer", "farmers"),
    ("lawyer", "lawyers"),
    ("doctor", "doctors"),
    ("painter", "painters"),
    ("chemist", "chemists"),
    ("baker", "bakers"),
    ("sailor", "sailors"),
    ("judge", "judges"),
]
INDUSTRIES = [  # (kind of organization, the word its names end with)
    ("bank", "Bank"),
    ("airline", "Airways"),
    ("publisher", "Press"),
    ("brewery", "Brewing"),
    ("shipyard", "Yards"),
    ("insurer", "Insurance"),
    ("bakery", "Bakers"),
    ("museum", "Museum"),
    ("university", "University"),
    ("orchestra", "Orchestra"),
]
# Words that start with a vowel letter but a consonant sound ("a university", "a useful map").
CONSONANT_SOUND = {"university", "useful", "unique", "european"}
PRONOUNS = {  # subject, object, possessive; "they" takes plural verbs
    "f": ("she", "her", "her"),
    "m": ("he", "him", "his"),
    "n": ("they", "them", "their"),
}
WHEN = ["week", "month", "year", "spring", "summer", "winter"]
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
MONTHS = "January February March April May June July August September October November December"
MONTHS = MONTHS.split()
NUMBERS = ["two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "many"]
ITEMS = """umbrella bicycle lamp clock chair table guitar violin camera map kettle blanket basket
mirror painting rug jacket coat hat scarf book notebook pen pencil radio bottle cup vase candle key
wallet ring watch bag box ladder hammer boat kite drum flute telescope globe envelope apple orange
egg onion oven anchor easel atlas engine piano sofa desk teapot compass saddle lantern helmet
bucket shovel spoon fork knife plate bowl pillow curtain carpet statue sculpture poster letter
parcel ticket sandwich cake pie loaf cheese melon lemon peach pear carrot potato tomato shirt
sweater glove boot sock belt necklace bracelet brooch fan heater printer keyboard tablet
microscope trumpet harp cello accordion banjo tent hammock canoe sled wagon tractor""".split()
ADJECTIVES = """red blue green yellow black white old new small large heavy light cheap expensive
elegant ugly odd ordinary antique beautiful broken shiny wooden simple strange tiny huge modern rare
useful empty famous quiet purple orange grey brown pink silver golden bright dark clean dirty
soft hard warm round square narrow wide long short thin thick fragile sturdy lovely handsome
precious valuable worn dusty polished painted striped spotted""".split()
PLACES = """market harbour station library cafe square bridge park gallery stadium airport theatre
garden hotel fair festival museum concert school hospital pier beach castle chapel lighthouse
zoo""".split()
TOPICS = """history music trade fishing farming poetry medicine chess football astronomy shipping
cooking mathematics gardening architecture politics travel science language law energy
geography philosophy economics biology chemistry physics sculpture dancing sailing weaving
pottery photography birds insects rivers mountains volcanoes forests deserts islands bridges
railways ships""".split()
VERBS_PAST = """repaired painted sold ordered borrowed found designed built cleaned wrapped returned
carried polished measured photographed delivered""".split()
WEATHER = ["sunny", "rainy", "cold", "warm", "windy", "foggy", "cloudy", "snowy", "hot", "stormy"]
MEALS = ["breakfast", "lunch", "dinner"]
OPENERS = [  # optional lead-ins that vary the wording of fact sentences
    "according to the records ,",
    "as far as we know ,",
    "as everyone knows ,",
    "in fact ,",
    "by all accounts ,",
    "as the newspaper reported ,",
    "people say that",
    "it is well known that",
    "we learned that",
    "the guide says that",
    "everyone in town knows that",
    "the old atlas says that",
]


# Words that names must never be, besides every word the templates use.
_COMMON_WORDS = """a an the and or of in on at to for from is are was were be been has have had
do does did will would can not no it its he she they him her them his their we you me my our
this that these those with by as but if so up down out over under new old north south east west
man men woman women city town country people year years day days home work job name names
sun sea air fire water stone iron gold silver land river lake hill mount port bay""".split()


def lexicon_words() -> set[str]:
    """Every word of the lists above, and the common words, lower-cased: no name may be one."""
    words = set(_COMMON_WORDS) | {w for o in OPENERS for w in o.split()}
    for lexicon in (WHEN, WEEKDAYS, MONTHS, NUMBERS, ITEMS, ADJECTIVES, PLACES, TOPICS, WEATHER):
        words |= {w.lower() for w in lexicon}
    words |= {w.lower() for w in (*MEALS, *VERBS_PAST)}
    words |= {w.lower() for pair in (*PROFESSIONS, *INDUSTRIES) for w in pair}
    return words


def article(word: str) -> str:
    """``"an"`` before a vowel sound, ``"a"`` otherwise.

    The sound, not the letter, decides ("a university", "an umbrella"); the exceptions this
    lexicon needs are listed in ``CONSONANT_SOUND``.
    """
    starts_with_vowel = word[0].lower() in "aeiou" and word.lower() not in CONSONANT_SOUND
    return "an" if starts_with_vowel else "a"
