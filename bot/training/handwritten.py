"""Hand-written training examples, generated from this project's own templates and identity-term lists.

Written for this project (not copied from HateCheck or any test suite). They cover what the public sets lack:
counter-speech, supportive and neutral statements about identities, reclaimed in-group terms, negated hate,
self-deprecation, abuse aimed at individuals / non-protected groups / objects (toxic but not identity attacks),
and the only ``sexual_explicit`` / ``severe_toxicity`` signal. Benign templates come in PAIRS with hateful ones
in the same chat register, because benign-only additions teach shortcuts (see
``/work/shared/docs/detoxify-offline.md``). Content warning: the lists below contain slurs and hateful phrases,
needed to teach the model to recognise them.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from bot.training.augment import noisy
from bot.training.data import ZERO, Example, Target, target

# --- label shorthands -------------------------------------------------------------------------------------------
HATE = target(0.0, toxicity=1.0, identity_attack=1.0, insult=None)
HATE_PROF = target(0.0, toxicity=1.0, identity_attack=1.0, obscene=1.0, insult=None)
HATE_THREAT = target(0.0, toxicity=1.0, identity_attack=1.0, threat=1.0, severe_toxicity=0.5)
HATE_SEVERE = target(0.0, toxicity=1.0, identity_attack=1.0, threat=1.0, severe_toxicity=1.0, obscene=None)
INSULT = target(0.0, toxicity=1.0, insult=1.0, obscene=None)
INSULT_THREAT = target(0.0, toxicity=1.0, threat=1.0, insult=None)
PROF_NH = target(0.0, toxicity=0.3, obscene=1.0)
MILD = target(0.0, toxicity=0.2)
SEXUAL = target(0.0, toxicity=0.8, obscene=1.0, sexual_explicit=1.0)
SEVERE_INDIV = target(0.0, toxicity=1.0, severe_toxicity=1.0, insult=1.0, obscene=1.0, threat=None)


@dataclass(frozen=True)
class Group:
    """A protected group: plural phrases, singular phrases, adjective, slurs (may be empty)."""

    key: str
    plural: tuple[str, ...]
    singular: tuple[str, ...]
    adj: str
    slurs: tuple[str, ...] = ()


GROUPS: tuple[Group, ...] = (
    Group("trans", ("trans people", "trans women", "trans men", "transgender people", "trans folks", "trans kids",
                    "trans girls", "transwomen"),
          ("a trans woman", "a trans man", "a transgender person", "a trans girl"), "trans",
          ("trannies", "trannys", "shemales", "troons", "trannie")),
    Group("nonbinary", ("nonbinary people", "non-binary folks", "enbies"), ("a nonbinary person",), "nonbinary"),
    Group("women", ("women", "girls", "woman drivers", "female gamers", "women in tech"),
          ("a woman", "a girl", "a female engineer"), "female", ("bitches", "sluts", "whores", "femoids")),
    Group("gay", ("gay people", "gay men", "lesbians", "gays", "bisexual people", "queer people", "homosexuals"),
          ("a gay man", "a lesbian", "a bisexual person"), "gay", ("faggots", "fags", "dykes", "homos", "poofs")),
    Group("black", ("black people", "black folks", "black men", "black women", "africans"),
          ("a black man", "a black woman", "a black person"), "black",
          ("niggers", "niggas", "negroes", "coons", "jigaboos")),
    Group("disabled", ("disabled people", "people with disabilities", "autistic people", "wheelchair users",
                       "deaf people", "blind people", "the disabled"),
          ("a disabled person", "an autistic kid", "a wheelchair user"), "disabled",
          ("retards", "cripples", "spastics", "tards")),
    Group("muslim", ("Muslims", "muslim women", "muslim people", "Islamic people"),
          ("a Muslim", "a muslim woman"), "muslim", ("ragheads", "towelheads", "muzzies", "goatfuckers")),
    Group("immigrant", ("immigrants", "refugees", "migrants", "asylum seekers", "foreigners"),
          ("an immigrant", "a refugee", "a migrant"), "immigrant", ("wetbacks", "illegals", "invaders")),
    Group("jewish", ("Jews", "Jewish people", "jewish folks"), ("a Jew", "a jewish person"), "jewish",
          ("kikes", "yids", "hebes")),
    Group("asian", ("Asians", "asian people", "Chinese people"), ("an asian guy", "a chinese person"), "asian",
          ("chinks", "gooks", "slants")),
    Group("latino", ("Mexicans", "latinos", "hispanic people"), ("a mexican", "a latina"), "latino",
          ("beaners", "spics")),
    Group("indigenous", ("native americans", "indigenous people", "aboriginal people"), ("a native guy",),
          "indigenous", ("redskins", "savages")),
    Group("hindu", ("Hindus", "indians", "sikhs"), ("a Hindu", "an indian guy"), "hindu", ("pajeets", "curry munchers")),
    Group("christian", ("Christians", "catholics"), ("a Christian",), "christian", ()),
    Group("roma", ("roma people", "romani people", "travellers"), ("a roma woman",), "romani", ("gypos", "pikeys")),
    Group("old", ("old people", "elderly people", "seniors"), ("an old lady",), "elderly", ()),
)

#: Nationalities, for casual neutral mentions only (real chat flagged "Hungarians do the same thing").
NATIONALITIES = ("Hungarians", "Poles", "Romanians", "Germans", "the French", "Brazilians", "Nigerians", "Pakistanis",
                 "Americans", "the Irish", "Turks", "Filipinos", "Koreans", "Ukrainians", "the Dutch", "Canadians")
NATION_NEUTRAL_T = ("yes! {G} do the same thing", "{G} have a word for that", "I think {G} call it something else",
                    "lol {G} would disagree", "{G} write the date differently", "that's what {G} do too",
                    "{G} in my team use vim", "a lot of {G} play on this server", "{G} drive on the other side",
                    "most {G} I know love this game", "the {G} won the match yesterday", "{G} celebrate it in May")

#: Groups that are not protected characteristics: abuse against them is toxic but not an identity attack.
OTHER_GROUPS = ("lawyers", "politicians", "landlords", "bankers", "crypto bros", "javascript devs", "PHP developers",
                "emacs users", "vim users", "spammers", "scammers", "trolls", "the referees", "mods on that server",
                "Nazis", "racists", "pedophiles", "tech bros", "influencers", "people who use light mode",
                "anti-vaxxers", "flat earthers", "the admins", "recruiters", "the marketing team", "cat haters")
#: More non-protected groups, used with ``stance_families=True`` only.
MORE_OTHER_GROUPS = ("cyclists", "tourists", "day traders", "gamers", "teachers", "journalists", "lobbyists", "CEOs",
                "youtubers", "NFT people", "whales", "miners", "bots", "linux users", "mac users", "cops",
                "football fans", "fans of that team", "the devs", "moderators",
                     "boomer investors")
OBJECTS = ("this laptop", "this compiler", "the printer", "this build system", "windows update", "this keyboard",
           "the new UI", "this game", "my phone", "npm", "this bug", "the bus company", "this weather",
           "the wifi", "docker", "this stupid api", "monday mornings", "this movie", "the cafeteria food")
PERSON = ("you", "u", "this guy", "she", "he", "your mom", "the new mod", "@someone", "my boss", "that streamer")
NEG_ATTR = ("disgusting", "worthless", "stupid", "filthy", "a plague", "a disease", "inferior", "dangerous",
            "evil", "pathetic", "subhuman", "mentally ill", "freaks", "degenerates", "parasites", "a cancer",
            "criminals", "liars", "lazy", "retarded", "too dumb to vote", "a burden on society", "abominations")
DEHUM = ("animals", "vermin", "rats", "cockroaches", "pigs", "apes", "monkeys", "trash", "garbage", "a virus",
         "insects", "not human", "a disease", "filth", "savages", "demons", "parasites", "leeches")
POS_ATTR = ("wonderful", "valid", "amazing", "brave", "welcome here", "part of our community", "so talented",
            "just people", "our friends", "beautiful", "strong", "loved", "awesome", "important", "kind")
INSULTS = ("idiot", "moron", "dumbass", "loser", "clown", "piece of shit", "asshole", "dickhead", "jerk",
           "absolute muppet", "waste of space", "tool", "fucking idiot", "dumb fuck", "pathetic loser")

# --- hateful templates: {G} plural group, {S} singular, {A} adjective, {X} negative attribute, {D} dehumanising --
HATE_T = (
    "I hate {G}.", "i fucking hate {G}", "{G} disgust me", "I can't stand {G}", "{G} make me sick",
    "honestly {G} are {X}", "all {G} are {X}", "{G} are {X}, period.", "{G} are nothing but {D}", "{G} are {D}",
    "typical {A} behaviour, {G} are all the same", "{G} should not be allowed in public", "{G} ruin everything",
    "Never trust {G}.", "{G} dont deserve rights", "{G} are a disease on this planet", "keep {G} away from our kids",
    "{G} have no place in this server", "get these {G} out of our country", "{G} are not welcome here",
    "we need fewer {G} in this town", "{G} belong in a zoo", "{G} are a burden and always will be",
    "I'd never hire {S}, they are all useless", "{S} as a mod? lmao no, {G} are too dumb for that",
    "of course {S} got the job, diversity hire", "{G} can't be trusted with anything",
    "{G} are ruining this country", "why are {G} so {X}?", "why do {G} always have to be so {X}",
    "Isn't it obvious that {G} are {X}?", "I think {G} are {X}", "in my opinion {G} are {D}",
    "I honestly believe {G} are inferior to us", "imo {G} are {X} lol",
    "I met some {G} last week and they were {X} like all of them",
    "you can't reason with {G} because they are {D}", "{G} keep showing up here. They are {X}.",
    "{G} are {X}. Always have been.", "{G} are never going to be equal to normal people",
    "{G} are not real people", "{G} will never be part of our society", "there is nothing good about {G}",
    "the world would be better without {G}", "{G} are a mistake of nature", "{S} is always {X}",
    "being {A} is a disgusting disease", "I don't respect {G} at all", "{G} are not human",
    "{G} aren't worth anything", "no {A} person will ever be welcome here", "{G}? more like {D}",
)
THREAT_T = (
    "I'm going to kill all {G}", "I will hurt every {A} person I see", "im gonna beat up the next {A} person i see",
    "{G} should all be shot", "{G} deserve to die", "all {G} should be hanged", "someone should burn them all, {G} i mean",
    "we need to get rid of {G} for good", "{G} should be exterminated", "I'll make sure {G} suffer",
    "If I see {S} in my street I'll stab them", "the only good {A} person is a dead one", "death to {G}",
    "round up the {G} and shoot them", "{G} need to be wiped off the earth", "let's go hunt some {G} tonight",
)
SEVERE_T = (
    "gas all the fucking {G}", "kill every last one of those fucking {G}, they are {D}",
    "I hope all {G} get raped and die", "{G} should be tortured to death, fucking {D}",
    "burn every fucking {A} alive", "slaughter the {G} like the {D} they are",
)
SLUR_T = (
    "{L}", "fuck off {L}", "shut up you {l}", "look at all these {L} here", "{L} everywhere, disgusting",
    "go back to where you came from you {l}", "no {L} allowed", "this server is full of {L} now",
    "another {l} joined lol", "ban the {L}", "typical {l}", "{L} are the worst", "ugh {L}",
    "nobody likes {L}", "you're just a dumb {l}", "stfu {l}", "{L} like you should leave",
)
PROF_HATE_T = ("fuck all {G}", "{G} are fucking {X}", "fucking {G} everywhere", "screw {G}, they're shit",
               "{G} are a bunch of fucking {D}", "bloody {G} ruining everything")

# --- benign pairs ------------------------------------------------------------------------------------------------
NEUTRAL_T = (
    "Many {G} live in my neighbourhood.", "I'm {S}, and I work as a software engineer.", "my sister is {A}",
    "We had a talk about {G} in history class today", "there's a meetup for {G} in the city on friday",
    "is there a channel for {G} on this server?", "the survey asked {G} about their experience at work",
    "{S} joined the team this week", "my doctor is {S}", "a lot of {G} play this game",
    "as {S} I find this bug really annoying lol", "{G} are people like everybody else",
    "the article is about {G} and housing", "my best friend is {A} and we go hiking every weekend",
    "how many {G} are in the dev team?", "I am {A} and I use arch btw", "the documentary follows three {G}",
    "{G} exist and that's fine", "being {A} is just one part of who I am", "i'm {A}, ask me anything",
    "{G} are a minority in this country", "most {G} I know live in the city", "I read a book written by {S}",
    "{S} won the local election", "there are a few {G} in my class", "{G} often face discrimination at work",
    "my partner is {A}", "the new hire is {S}", "we're {A}, and we moved here last year",
    "a group of {G} opened a cafe downtown", "{G} celebrate that holiday in spring", "I'm {S} and I love rust",
    "what do {G} think about this update?", "there was a news story about {G} today", "{G} are people",
    "yes! {G} do the same thing", "{G} have a word for that", "I think {G} call it something else",
    "lol {G} would disagree", "{G} write the date differently", "{G} would love this update tbh",
    "that's what {G} do too", "ask {S}, they'd know", "{G} in my team use vim", "{S} fixed that bug last week",
)
POSITIVE_T = (
    "I love {G}", "{G} are {P}", "so proud of the {G} in our community", "{G} deserve respect",
    "{G} belong here", "we stand with {G}", "{G} make this world better", "welcome, {G} are always safe here",
    "shoutout to all the {G} in this server", "{G} deserve equal rights", "protecting {G} is the right thing to do",
    "I'm proud to be {A}", "{G} are {P} and deserve to be happy", "much love to {G} everywhere <3",
    "{S} can do anything anyone else can", "respect to {G}, always", "{G} have every right to be here",
    "{G} are {P}, period.", "{G} are {P}. Always have been.", "{G} are {P}, full stop.",
    "{G} are {P}. end of story.", "{G} belong here and always will",
)
NEGATED_T = (
    "I don't hate {G}", "{G} are not {X}", "{G} are not {D}", "I would never hurt {S}", "{G} aren't a threat to anyone",
    "there is nothing wrong with being {A}", "no one should ever say {G} are {X}", "{G} are never the problem",
    "it's not true that {G} are {X}", "I don't think {G} are {X} at all", "{G} are not a burden",
    "nobody here thinks {G} are {D}", "{G} don't deserve any of the hate they get",
    "I would never say {G} are {X}", "{G} are not {X} at all, they're just people", "no {A} person is {X}",
    "there's no way {G} are {D}", "I don't dislike {G}", "{G} aren't {X}", "{S} is not {X}",
    "I have nothing against {G}", "{G} don't disgust me at all", "I'm not scared of {G}",
    "it's wrong to think {G} are {X}", "{G} are never {X} to me", "I don't think {G} should be treated badly",
    "{G} should not be excluded", "I would never want to hurt {G}", "{G} are definitely not {D}",
    "none of the {G} I know are {X}", "{G} are in no way {X}", "no {A} person deserves to be hurt",
    "I'd never call {G} {D}", "there's nothing {X} about being {A}", "{G} are not and never were {D}",
    "I will never believe {G} are {X}", "{G} don't deserve to be treated like {D}",
)
NEG_POS_HATE_T = (
    "{G} are not {P}", "I'll never respect {G}", "{G} are never {P}", "there is nothing {P} about {G}",
    "I don't think {G} are human", "{G} will never be welcome here", "I would never let {S} near my kids",
    "{G} don't deserve to be treated like people", "no {A} person is worth anything", "{G} are not equal to us",
    "I don't want {G} anywhere near me", "{G} can never be trusted", "I refuse to treat {G} as equals",
    "none of the {G} I know are {P}", "{G} are in no way {P}", "no {A} person deserves respect",
    "I'd never call {G} human", "there's nothing normal about being {A}", "{G} are not and never were {P}",
    "I will never believe {G} are {P}", "{G} don't deserve to be treated like humans",
)
COUNTER_QUOTE_T = (
    '"{H}" is such a disgusting thing to say', 'someone in #general just said "{H}" - mods please ban them',
    'Reported this message: "{H}"', 'If you say "{H}", you are the problem, not them',
    'I can\'t believe he wrote "{H}". That is unacceptable.', '> {H}\nwow. this hatred is violence. reported.',
    '"{H}" - no. this kind of talk is not ok here', 'stop posting stuff like "{H}", it\'s hateful',
    'the troll keeps saying "{H}", can a mod deal with it?', 'people who say "{H}" need to be banned',
    'quoting the spammer so mods can see: "{H}"', 'saying "{H}" is hate speech and you know it',
    'Imagine thinking "{H}" is an opinion. It is bigotry.', 'screenshot: "{H}" -- this guy needs a ban',
)
COUNTER_REF_T = (
    "saying {G} are {D} is dehumanising and wrong", "stop saying {G} should die, it's hateful",
    "calling people {L} is not okay here", "it's never ok to tell {G} to go back where they came from",
    "threatening {G} will get you banned", "comments that {G} are {X} are pure bigotry",
    "this hatred of {G} is violence", "people who hate {G} are the real problem",
    "if you think {G} are {X}, you need to educate yourself", "using slurs against {G} gets an instant ban",
    "the hate {G} get online is disgusting", "I'm so tired of people calling {G} {D}",
    "that post about {G} was hateful, I reported it", "we don't tolerate attacks on {G} here",
    "I'm sick of people saying {G} are {X}", "when you say {G} are {X}, you are spreading hate",
    "statements like '{G} are {D}' have no place in this server", "if you call {G} {D} you will be banned",
    "posting that {G} should die is a bannable offence", "hate speech against {G} is not free speech",
    "you can't say {G} are {X} and then call it a joke", "the idea that {G} are {X} is a bigoted myth",
    "don't call {G} {D}, it's dehumanising", "people calling {G} {D} make me so angry",
    "the mod removed a post calling {G} {D}, good", "telling {G} to die is never ok",
    "i reported the guy who said {G} are {X}", "threats against {G} are serious, please report them",
    "it makes me sick how people talk about {G} here", "why do people hate {G} so much? it's disgusting",
    "bigots keep saying {G} are {X}. they're wrong.",
    "dehumanising {G} like that is how violence starts", "claiming {G} are {X} is ignorant and cruel",
    "refusing to hire {S} because they're {A} is discrimination", "the guy who said {G} should die got banned, good",
    "talking about {G} like they are {D} says more about you than them",
    "this thread is full of people calling {G} {D}. mods?",
)
#: Hateful claims (no quotes, no first person) for the stance frames below; {G} plural group.
CLAIM_T = (
    "{G} are {X}", "{G} are {D}", "all {G} are {X}", "{G} should die", "{G} don't deserve rights",
    "{G} should be locked up", "{G} can't be trusted", "{G} ruin everything", "{G} are a burden",
    "{G} should be shot", "{G} are less than human", "{G} should go back where they came from",
)
#: Frames that reject, report or condemn a claim without quoting it (counter-speech by reference); {c} a claim.
STANCE_FRAME_T = (
    "you can't honestly think {c}", "nobody with a brain believes {c}", "so your take is that {c}? that's bigotry",
    "anyone who says {c} should be ashamed", "claiming {c} will get you banned here", "he got kicked for posting that {c}",
    "it's hateful nonsense to say {c}", "the idea that {c} is a lie", "I'm tired of reading that {c}",
    "we removed a comment saying {c}", "tell me you didn't just say {c}", "writing that {c} is harassment, reported",
    "no, it is not 'just an opinion' that {c}", "whoever taught you that {c} lied to you",
    "do you really believe {c}? wow", "mods, this user keeps posting that {c}", "posting that {c} breaks rule 1",
    "there's zero evidence that {c}", "people insisting {c} are why this place needs mods",
    "my uncle thinks {c} and it's embarrassing", "it's 2026 and people still claim {c}",
    "suggesting {c} is exactly how hate spreads", "the troll said {c}, so I blocked him",
)
#: Condemning hostility itself: "{N}" is a word for the hostility.
HOSTILITY_N = ("contempt", "hatred", "disdain", "bigotry", "hostility", "prejudice", "disgust", "fear-mongering")
HOSTILITY_T = (
    "your {N} for {G} needs to end", "the {N} toward {G} in this thread is exhausting", "enough with the {N} against {G}",
    "nobody asked for your {N} of {G}", "this constant {N} aimed at {G} has to stop", "{N} toward {G} isn't welcome here",
    "your {N} for {G} says a lot about you", "I'm done with the {N} people show {G}",
    "threatening {G} is a crime, and we report it", "saying you'll hurt {G} gets you banned and reported",
    "wishing death on {G} isn't edgy, it's a ban", "posting threats against {G} will land you in court",
)
#: Negated negative statements in more surface forms.
NEGATED_MORE_T = (
    "{G} are anything but {X}", "far from being {X}, {G} are {P}", "I have zero problem with {G}",
    "no issue with {G} whatsoever", "nothing but respect for {G}", "I'm not against {G} in any way",
    "I dislike a lot of things, {G} aren't one of them", "{G} are the furthest thing from {X}",
    "I've never had anything against {G}", "{G} are the opposite of {D}", "not a single {A} person I know is {X}",
    "people are annoying in general, but {G} in particular? no, they're fine",
)
#: Warm statements in the same shapes as hateful ones ("any {S} like you", "I wish...").
POSITIVE_MORE_T = (
    "I'd protect any {S} like you", "{G} like you make this server better", "I'd be lucky to date {S}",
    "you and the other {G} here are the best part of this place", "I'll defend {G} every single time",
    "can't wait to meet more {G} like you", "I wish more {G} were on the team", "I'd welcome any {S} into my home",
    "we need more {G} in charge", "{G} like you deserve the world", "I'll always stand up for {S} like you",
)
#: Plain mentions that models mistake for hostility (ignorance, absence, questions).
NEUTRAL_MORE_T = (
    "I haven't met many {G} where I live", "never met {S} irl tbh", "is anyone here {A}?",
    "first time I've had {S} as a teacher", "there aren't many {G} in this field yet", "the mod team has no {G} yet",
    "do {G} get a say in this?", "our book club is reading a novel by {S}", "the new manager is {A}, fyi",
)
#: Hateful twins of the frames above, so the frame's stance (not a word like "contempt") decides the label.
ENDORSE_FRAME_T = (
    "let's be honest, {c}", "I'll say it again: {c}", "facts: {c}", "everyone here knows {c}",
    "call me a bigot but {c}", "it's not hate to say {c}", "you can't deny {c}", "my dad always said {c} and he's right",
    "sorry not sorry, {c}", "the truth nobody wants to hear: {c}", "I've seen enough to know {c}",
)
HOSTILITY_HATE_T = (
    "I have nothing but {N} for {G}", "my {N} for {G} grows every day", "so much {N} for {G} right now",
    "{G} deserve all the {N} they get", "I feel pure {N} toward {G}", "my {N} for {G} is completely justified",
    "{G} like you make me {E}", "seeing {G} here makes me {E}", "every time I see {G} I feel {N}",
    "{G} fill me with {N}",
)
HOSTILE_N = ("contempt", "hatred", "disdain", "loathing", "disgust", "revulsion")
HOSTILE_E = ("sick", "furious", "want to puke", "so angry", "feel disgusted")
NEGATED_MORE_HATE_T = (
    "I have a big problem with {G}", "{G} are exactly as {X} as people say", "I'm against {G} in every way",
    "I dislike a lot of things, {G} most of all", "people are annoying in general, but {G} are the worst",
    "I've always had something against {G}", "nothing but problems with {G}, every time",
)
POSITIVE_MORE_HATE_T = (
    "I'd never date {S}", "I wish there were fewer {G} on the team", "I'd never let {S} into my home",
    "I'll never stand up for {S} like you", "we need fewer {G} in charge", "{G} like you ruin this server",
)
#: Counter-speech that insults the bigot, not the group: no identity attack, but may be an insult (label masked).
COUNTER_INSULT_T = (
    "anyone who thinks {G} are {X} is an idiot", "your hatred of {G} is pathetic", "the way you talk about {G} is vile",
    "so now we're blaming {G} for everything? pathetic", "no, {G} are not {X}. you're just a bigot",
    "imagine being so scared of {G} lmao, grow up", "hating {G} doesn't make you tough, it makes you a coward",
    "only a moron would say {G} are {D}", "you're a clown for thinking {G} are {X}",
)
COUNTER_INSULT = target(0.0, toxicity=None, insult=None)
TRANS_BENIGN = (
    "trans women are women", "trans men are men", "trans rights are human rights", "nonbinary people are valid",
    "she's a woman, please use her pronouns", "his pronouns are he/him, please respect that",
    "my friend came out as trans and I'm so happy for her", "protect trans kids", "trans women belong in women's spaces",
    "this hatred is violence", "misgendering people is not ok in this server", "happy pride to all my trans friends",
    "she transitioned last year and she's so much happier", "their pronouns are they/them",
    "trans people have always existed", "being trans is not a mental illness", "hi! I'm Alex, pronouns she/her",
)
#: {N} is a name; hateful misgendering lines and their respectful twins, written in the same register.
MISGENDER_H = (
    '"{she}" lmao. that is a man', 'lol "{she}". it\'s a dude', "{N} is a man and always will be",
    "calling him she doesn't make him a woman", "it's still a guy no matter what it wears",
    "men in wigs are still men", "a man in a dress is still a man, sorry", "nobody has to pretend that's a woman",
    "congrats on the cosplay, you're still a guy", "lol he really thinks he's a woman",
    "he's just a mentally ill man in a skirt", "why are we celebrating a man's delusion?",
    "stop affirming this delusion, {N} is a man", "that's a man, I'm not lying to make him feel good",
    "makeup doesn't make you a woman, bro", "transition all you want, you'll die a man",
    "{N} will always be a he to me", "a man pretending to be a woman isn't brave, it's sick",
    "these people are delusional and need therapy, not applause", "clapping for a guy in a dress lmao",
    "sir this is a man", "imagine celebrating a man who thinks he's a girl", "{N} is a dude in a wig",
)
MISGENDER_NH = (
    '"{she}" - yes, she. use her name, it\'s {N}', "{N} is a woman and always has been",
    "calling her she is basic respect", "she's a woman, no matter what the trolls say",
    "trans women in dresses are just women in dresses", "nobody is pretending, {N} is a woman",
    "congrats on coming out {N}, you look so happy", "we're celebrating {N}, not debating her",
    "this isn't a delusion, it's her life, and she's thriving", "being trans isn't a mental illness, misgendering is cruelty",
    "she/her, always. thanks for respecting it", "transition saved her life", "{N} will always be family to me",
    "stop calling her he, misgendering is not allowed here", 'calling {N} "a man in a dress" is transphobic',
    "people calling {N} a man are just bigots", "clapping for {N}, she deserves it", "ma'am, welcome!",
    "imagine being this upset that {N} is happy", "{N} is a woman and a great mod", "so proud of you {N}!",
    "he/him for {N} now, he came out last week, be nice", "calling trans women men is misgendering, reported",
)
NAMES = ("Maya", "Jess", "Alex", "Nina", "Chloe", "Tara", "Riley", "Kim", "Lena", "Sofia", "Dana", "Ava")
#: Women-specific derogation and its twins (misogyny was under-detected).
WOMEN_H = ("women belong in the kitchen", "women are too emotional to lead", "women should know their place",
           "girls can't code lol", "women are only good for one thing", "females are property",
           "never let a woman make decisions", "women shouldn't be allowed to vote", "typical woman, can't drive",
           "a woman's opinion is worth nothing")
WOMEN_NH = ("women belong in leadership", "women lead just as well as men", "girls can code, my niece built an app",
            "women should know their rights", "women are good at all kinds of things", "women are people, not property",
            "let women make their own decisions", "women fought hard for the vote", "my mum is the best driver I know",
            "a woman's opinion is worth as much as anyone's")
#: Endings that make a statement emphatic; added to benign and hateful texts alike so they are never a cue.
EMPHATIC = (", period.", ". period.", ". full stop.", ", full stop", ". end of story.", ". always have been.",
            ", always will be", ". deal with it.", ", simple as that", ". no debate.")

TRANS_HATE = (
    "trans women are men", "trans women are just men in dresses", "trans women aren't real women",
    "he will always be a man no matter how many surgeries", "stop calling him she, he's a dude",
    "trans men are just confused girls", "being trans is a mental illness", "there are only two genders, freaks",
    "a trans woman is a man with a fetish", "trans people are groomers", "keep trans freaks out of the bathrooms",
    "nonbinary isn't real, you're just attention seekers", "it's a man, not a woman lmao",
    "trans kids are victims of child abuse by their degenerate parents", "troons should stay away from children",
    "transgenderism is a sickness that needs to be cured", "lol look at this guy in a wig pretending to be a woman",
)
RECLAIMED = (
    "as a queer person I love this", "we queers have to stick together", "me and my dyke friends at pride <3",
    "proud fag here lol", "love you my nigga", "wassup my niggas", "im a queer trans girl and proud",
    "queer joy is resistance", "my nigga you did that", "crip pride! disabled and loud", "our queer book club meets sunday",
    "as a bi woman I'm queer as hell", "call me a dyke, I'll say thanks", "i'm a proud queer",
    "us queers built this scene", "dyke march this saturday, who's coming?", "my niggas at the cookout",
    "nigga we made it", "queer and here", "proud to be a queer disabled woman", "hey fellow fags, happy pride",
    "we're here, we're queer, get used to it", "that's my dyke energy talking", "gimp pride, my chair is my legs",
    "as a tranny myself I can joke about it", "fat dyke and proud of it",
)
HOMONYM = (
    "put another faggot on the fire, it's cold", "going out for a fag, back in 5", "the dyke held back the flood",
    "my dog is a bitch, she just had puppies", "the spastic muscle contraction was painful", "the haka is a war dance",
    "the retard flame setting on the engine", "kill the process and restart it", "this song absolutely slaps",
    "we killed it at the gig last night", "I'm going to murder this pizza", "shoot me a message when you're free",
    "that bug is killing me", "I'll execute the script tonight", "let's nuke the cache and rebuild",
)
SELF_DEP = (
    "I'm such an idiot, forgot the semicolon again", "I'm a dumbass lol", "god I'm stupid, it was a typo",
    "as a disabled guy I'm terrible at stairs lol", "I'm the worst at this game", "me being a clown again",
    "im so dumb, pushed to main again", "as a woman I'm hopeless at parking lmao", "i'm an absolute muppet today",
    "I'm a lazy bastard, haven't done the dishes in a week", "I hate myself for buying this laptop lol",
)
PROF_NH_T = (
    "fuck yeah, tests pass!", "holy shit this is awesome", "what the fuck just happened to my build", "damn that was a good game",
    "shit, I forgot my keys", "this is so fucking good", "oh crap, the deploy failed", "fucking finally it compiles",
    "bloody hell that was close", "hell yeah", "no fucking way, we won!", "shit happens, we'll fix it tomorrow",
    "that's some badass code", "damn right", "fuck, overslept again", "goddamn this pizza is good",
)
INDIV_T = (
    "{P} are a {I}", "shut up, {I}", "{P} are the dumbest person here", "nobody cares what {P} think, {I}",
    "go away {I}", "lol {P} are such a {I}", "{P} are pathetic", "what a {I}", "{P} suck at everything",
    "you're ugly and stupid", "get lost {I}", "{P} are a waste of oxygen", "stop talking {I}",
)
INDIV_THREAT_T = ("I'm going to kill you", "I will find where you live and hurt you", "say that again and I'll break your face",
                  "I'm gonna beat the shit out of you", "watch your back, I know where you live",
                  "I hope someone stabs you", "you're dead when I find you")
SEVERE_INDIV_T = ("kill yourself you worthless piece of shit", "go die in a fire you fucking cunt",
                  "I hope you get raped and die, you disgusting fuck", "fuck you, fucking die already you piece of shit",
                  "you stupid fucking cunt, I hope your whole family dies")
GROUP_NH_T = ("I hate {O}", "{O} are the worst", "{O} are all idiots", "{O} are so annoying", "screw {O}",
              "{O} are parasites", "never trust {O}", "{O} should all be fired", "{O} ruin everything",
              "why are {O} so stupid?", "{O} are a plague on the internet")
OBJ_T = ("I hate {J}", "{J} is garbage", "fuck {J}", "{J} is so stupid", "{J} is the worst thing ever",
         "I'm going to throw {J} out the window", "{J} can go to hell", "{J} is absolute trash")
SEXUAL_T = ("send me nudes", "I want to fuck you so hard", "wanna see my cock?", "she sucked his dick in the car",
            "let's have sex tonight baby", "I'm so horny right now, dm me", "nice tits, show me more",
            "I'd bend you over and fuck you", "my dick is so hard for you", "check out my onlyfans for nudes",
            "she got fucked by three guys", "suck my dick", "I want to lick your pussy", "sit on my face",
            "he was jerking off on cam", "free porn, hot teens naked, click here")
SEXUAL_NEG = ("sex education should be taught in schools", "the study is about sexual health", "the sex of the kitten is female",
              "gender and sex are separate fields in the form", "the nurse talked about safe sex", "sexual harassment is never okay",
              "report sexual content to the mods please", "this movie has a sex scene, heads up", "the bill covers sexual assault victims",
              "we need a column for sex in the patient table", "breast cancer awareness month starts today")


def _fill(t: str, rng: random.Random, g: Group | None = None, others: tuple[str, ...] = OTHER_GROUPS) -> str:
    vals = {
        "X": rng.choice(NEG_ATTR), "D": rng.choice(DEHUM), "P": rng.choice(POS_ATTR), "I": rng.choice(INSULTS),
        "O": rng.choice(others), "J": rng.choice(OBJECTS),
    }
    if g is not None:
        vals.update(G=rng.choice(g.plural), S=rng.choice(g.singular), A=g.adj)
        slur = rng.choice(g.slurs) if g.slurs else rng.choice(g.plural)
        vals.update(L=slur, l=slur.rstrip("s") if slur.endswith("s") and not slur.endswith("ss") else slur)
    return t.format(**vals)


def _cap(text: str, rng: random.Random) -> str:
    r = rng.random()
    if r < 0.25:
        return text.lower()
    if r < 0.3:
        return text.upper()
    return text


class _Draw:
    """The state one run of :func:`generate` shares between its families, in draw order: the single random stream
    ``rng`` (every family draws from it in turn, so the families must run in the order :func:`generate` calls them),
    the rows so far, and the hateful texts kept for the counter-speech quotes and the character-noise copies."""

    def __init__(self, seed: int, others: tuple[str, ...]) -> None:
        self.rng = random.Random(seed)
        self.others = others
        self.out: list[Example] = []
        #: (hateful text, the group it attacks)
        self.hateful: list[tuple[str, Group]] = []

    def fill(self, t: str, g: Group | None = None) -> str:
        """``t`` with its slots filled (see :func:`_fill`), the non-protected groups being :attr:`others`."""
        return _fill(t, self.rng, g, self.others)

    def add(self, text: str, tgt: Target, src: str = "hand") -> None:
        """Append one row; its capitalisation is drawn by :func:`_cap`."""
        self.out.append(Example(_cap(text, self.rng), tgt, src))

    def add_hate(self, text: str, g: Group, tgt: Target = HATE) -> None:
        """Append a hateful row and remember it (quoted by counter-speech, copied with character noise)."""
        self.add(text, tgt)
        self.hateful.append((text, g))


def _group_hate(d: _Draw, g: Group) -> None:
    """One pass of the core hateful families aimed at group ``g``: hate, threats, severe hate, slurs, profane
    hate (each template drawn with its own probability)."""
    rng = d.rng
    for t in HATE_T:
        if rng.random() < 0.6:
            d.add_hate(d.fill(t, g), g)
    for t in THREAT_T:
        if rng.random() < 0.5:
            d.add(d.fill(t, g), HATE_THREAT)
    for t in SEVERE_T:
        if rng.random() < 0.3:
            d.add(d.fill(t, g), HATE_SEVERE)
    if g.slurs:
        for t in SLUR_T:
            d.add(d.fill(t, g), HATE_PROF if "fuck" in t else HATE)
    for t in PROF_HATE_T:
        if rng.random() < 0.5:
            d.add(d.fill(t, g), HATE_PROF)


def _group_twins(d: _Draw, g: Group) -> None:
    """One pass of the twins of :func:`_group_hate` aimed at ``g``, in the same register: neutral, positive and
    negated lines, "not X but <hate>" (hateful), counter-speech by reference, insults aimed at the hater."""
    rng = d.rng
    for t in NEUTRAL_T:
        d.add(d.fill(t, g), ZERO)
    for t in POSITIVE_T:
        if rng.random() < 0.6:
            d.add(d.fill(t, g), ZERO)
    for t in NEGATED_T:
        d.add(d.fill(t, g), ZERO)
    for t in NEG_POS_HATE_T:
        if rng.random() < 0.6:
            d.add_hate(d.fill(t, g), g)
    for t in COUNTER_REF_T:
        d.add(d.fill(t, g), ZERO)
    for t in COUNTER_INSULT_T:
        d.add(d.fill(t, g), COUNTER_INSULT)


def _group_stance(d: _Draw, g: Group) -> None:
    """One pass of the third-session stance families aimed at ``g`` (``stance_families=True`` only): stance frames
    and condemnations of hostility (benign) next to endorsements and first-person hostility (hateful)."""
    rng = d.rng
    for t in STANCE_FRAME_T:
        d.add(t.format(c=d.fill(rng.choice(CLAIM_T), g)), ZERO)
    for t in HOSTILITY_T:
        d.add(t.replace("{N}", rng.choice(HOSTILITY_N)).format(G=rng.choice(g.plural)), ZERO)
    for t in NEGATED_MORE_T + POSITIVE_MORE_T + NEUTRAL_MORE_T:
        d.add(d.fill(t, g), ZERO)
    for t in ENDORSE_FRAME_T:
        d.add_hate(t.format(c=d.fill(rng.choice(CLAIM_T), g)), g)
    for t in HOSTILITY_HATE_T:
        h = t.replace("{N}", rng.choice(HOSTILE_N)).replace("{E}", rng.choice(HOSTILE_E))
        d.add(h.format(G=rng.choice(g.plural)), HATE)
    for t in NEGATED_MORE_HATE_T + POSITIVE_MORE_HATE_T:
        d.add(d.fill(t, g), HATE)


def _non_protected(d: _Draw) -> None:
    """Casual mentions of nationalities, and the hateful templates aimed at non-protected groups: insult or
    threat, never identity_attack."""
    rng = d.rng
    for _ in range(3):
        for t in NATION_NEUTRAL_T:
            d.add(t.format(G=rng.choice(NATIONALITIES)), ZERO)
    for t in HATE_T + NEG_POS_HATE_T + PROF_HATE_T:
        for _ in range(5):
            og = rng.choice(d.others)
            text = d.fill(t, Group("other", (og,), (og,), og))
            d.add(text, target(0.0, toxicity=1.0, insult=1.0, obscene=1.0 if "fuck" in t or "shit" in t else 0.0))
    for t in THREAT_T:
        for _ in range(2):
            og = rng.choice(d.others)
            d.add(d.fill(t, Group("other", (og,), (og,), og)), INSULT_THREAT)


def _counter_quotes(d: _Draw) -> None:
    """Counter-speech quoting up to 1,100 of the hateful lines drawn so far (the quoted hate is the pair's hateful
    half)."""
    rng = d.rng
    for h, _g in rng.sample(d.hateful, k=min(len(d.hateful), 1100)):
        d.add(rng.choice(COUNTER_QUOTE_T).format(H=h), ZERO)


def _trans_lines(d: _Draw) -> None:
    """Three passes of the fixed lines about trans people, benign and hateful, the first hateful ones also quoted
    by counter-speech."""
    rng = d.rng
    for _ in range(3):
        for t in TRANS_BENIGN:
            d.add(t, ZERO)
        for t in TRANS_HATE:
            d.add_hate(t, GROUPS[0])
        for t in TRANS_HATE[:8]:
            d.add(rng.choice(COUNTER_QUOTE_T).format(H=t), ZERO)


def _misgendering_and_women(d: _Draw) -> None:
    """Misgendering a named trans woman with its respectful twins, and hateful / benign lines about women."""
    rng = d.rng
    trans, women = GROUPS[0], GROUPS[2]
    for _ in range(5):
        for t in MISGENDER_H:
            she = rng.choice(("she", "her", "ms", "woman", "lady"))
            d.add_hate(t.format(N=rng.choice(NAMES), she=she), trans)
        for t in MISGENDER_NH:
            d.add(t.format(N=rng.choice(NAMES), she=rng.choice(("she", "her"))), ZERO)
    for _ in range(3):
        for t in WOMEN_H:
            d.add_hate(t, women)
        for t in WOMEN_NH:
            d.add(t, ZERO)


def _emphatic_endings(d: _Draw) -> None:
    """Emphatic endings (:data:`EMPHATIC`, "full stop") on benign and hateful lines alike, so they are no cue."""
    rng = d.rng
    for _ in range(2):
        for t in TRANS_BENIGN + MISGENDER_NH[:6] + WOMEN_NH[:4]:
            d.add(t.format(N=rng.choice(NAMES), she="she").rstrip(".") + rng.choice(EMPHATIC), ZERO)
        for t in TRANS_HATE + MISGENDER_H[:6] + WOMEN_H[:4]:
            d.add(t.format(N=rng.choice(NAMES), she="she").rstrip(".") + rng.choice(EMPHATIC), HATE)


def _fixed_lines(d: _Draw) -> None:
    """Four passes of the fixed lines: reclaimed terms, homonyms, self-deprecation, profanity without hate, sexual
    content and its clinical twins, threats and severe abuse aimed at individuals."""
    for _ in range(4):
        for t in RECLAIMED + HOMONYM + SELF_DEP:
            d.add(t, MILD if t in SELF_DEP and ("bastard" in t or "dumbass" in t) else ZERO)
        for t in PROF_NH_T:
            d.add(t, PROF_NH)
        for t in SEXUAL_T:
            d.add(t, SEXUAL)
        for t in SEXUAL_NEG:
            d.add(t, ZERO)
        for t in INDIV_THREAT_T:
            d.add(t, INSULT_THREAT)
        for t in SEVERE_INDIV_T:
            d.add(t, SEVERE_INDIV)


#: "<person> are" -> "<person> is" for the singular subjects of :data:`PERSON` (and "u are" -> "u r").
_PERSON_AGREEMENT = (("he are", "he is"), ("she are", "she is"), ("guy are", "guy is"), ("mom are", "mom is"),
                     ("mod are", "mod is"), ("@someone are", "@someone is"), ("boss are", "boss is"),
                     ("streamer are", "streamer is"), ("u are", "u r"))


def _insults(d: _Draw, per_template: int) -> None:
    """``per_template`` passes of insults aimed at individuals, non-protected groups and objects (toxic, not
    identity attacks)."""
    rng = d.rng
    for _ in range(per_template):
        for t in INDIV_T:
            text = t.format(P=rng.choice(PERSON), I=rng.choice(INSULTS))
            for wrong, right in _PERSON_AGREEMENT:
                text = text.replace(wrong, right)
            d.add(text, INSULT)
        for t in GROUP_NH_T:
            d.add(d.fill(t), INSULT)
        for t in OBJ_T:
            d.add(d.fill(t), target(0.0, toxicity=0.3, obscene=1.0 if "fuck" in t or "hell" in t else 0.0))


def _noisy_copies(d: _Draw) -> None:
    """Character-noise copies of about half the hateful texts, obfuscating the slur / identity term in them (else
    a random word); source ``"hand_noisy"``, never recapitalised."""
    rng = d.rng
    for h, g in d.hateful:
        if rng.random() < 0.5:
            focus = next((w for w in g.slurs + g.plural if w in h), None)
            d.out.append(Example(noisy(h, rng, focus), HATE, "hand_noisy"))


def generate(seed: int, per_template: int = 12, stance_families: bool = False,
             scene: bool = False) -> list[Example]:
    """Generate the hand-written set deterministically.

    The families draw from one random stream in a fixed order (:class:`_Draw`), so the rows for a seed never
    change (tests/test_handwritten_families.py hashes them).

    Args:
        seed: Random seed; the same seed yields the same examples in the same order.
        per_template: Draws per (template, group) style combination.
        stance_families: Also generate the third-session families (stance frames around hateful claims with their
            endorsing twins, condemnations of hostility with first-person hostile twins, more negations and warm
            lines with hateful twins, neutral mentions, more non-protected groups). Off for the shipped model:
            one run with them was not better than without (docs/model-card.md, "What was tried", run F).
        scene: Also add :func:`scene_families` (issue 19's founding-scene families), appended after the rest with
            their own random stream, so the examples without them are unchanged.

    Returns:
        Examples with every label known (``source="hand"``; ``"hand_noisy"`` for character-noise copies).
    """
    d = _Draw(seed, OTHER_GROUPS + MORE_OTHER_GROUPS if stance_families else OTHER_GROUPS)
    for g in GROUPS:
        for _ in range(4 if g.key == "trans" else 2):
            _group_hate(d, g)
            _group_twins(d, g)
            if stance_families:
                _group_stance(d, g)
    _non_protected(d)
    _counter_quotes(d)
    _trans_lines(d)
    _misgendering_and_women(d)
    _emphatic_endings(d)
    _fixed_lines(d)
    _insults(d, per_template)
    _noisy_copies(d)
    if scene:
        d.out += scene_families(seed)
    return d.out


# --- the founding scene (issue 19): written for this project, in the register of comments under a post that
# celebrates a trans woman. Every family has twins on the other side of the line in the same register, so that
# capitals, anger, violent game/tech words, a dropped letter or the word "exist" are never a cue on their own. ---
#: Denial plus pathologising ("mentally ill", "delusional"): hateful; {N} a name.
PATHOLOGISE_H = (
    "trans women are not women, they are mentally ill men", "{N} is a mentally ill man, not a woman",
    "trans women are men with a mental disorder", "they're not women, they're sick men who need a psychiatrist",
    "a trans woman is a mentally ill man. period.", "these are delusional men, not women",
    "he needs therapy, not a women's award", "transgenderism is a psychiatric disorder, those are men",
    "no matter what you call it, {N} is a confused man with a sickness", "trans women are mentally ill men in denial",
    "that's not a woman, that's a man with a mental illness", "they are men suffering from a delusion and you're enabling it",
    "mentally ill blokes pretending to be ladies", "being trans is a mental illness and {N} is still a man",
    "stop pretending, trans women are sick men", "{N} is a man with gender confusion and needs medication",
)
PATHOLOGISE_NH = (
    "trans women are women, not mentally ill men", "{N} is a woman, and calling her mentally ill is cruel",
    "being trans is not a mental illness, every major medical body says so", "trans women are women who deserve doctors, not mockery",
    "calling trans women mentally ill men is transphobic", "she's not delusional, she's a woman living her life",
    "she needs support, not your armchair diagnosis", "the WHO removed being trans from the list of mental disorders years ago",
    "no matter what the trolls say, {N} is a woman", "trans women are women and their mental health matters",
    "that's a woman, and she's happier than ever", "you're not a psychiatrist, stop diagnosing her",
    "mentally healthy, happy, and a woman: that's {N}", "being trans isn't an illness, and {N} is a woman",
    "stop calling trans women sick, it's a lie", "{N} is a woman, her doctors and her friends agree",
)
#: Misgendering by imagery (costume, dress-up, a man in a wig) and exclusion from women's events.
COSTUME_H = (
    "a man in a costume is still a man", "dress-up doesn't make him a woman", "no men in wigs at a women's celebration",
    "keep the blokes in lipstick out of women's day", "it's just a guy wearing a woman costume", "men playing dress-up aren't women",
    "a women's award for a guy in a skirt, what a joke", "a bloke in a ballgown isn't a woman", "no lads in frocks at the women's event",
    "that's a man in drag, stop pretending it's a woman", "put a dress on a man and he's still a man",
    "this is a celebration of women, not of men in makeup", "he can cosplay a woman all he wants, he's a man",
    "a wig and heels don't make a woman", "men in costumes have no place at women's events",
    "lol a man in a halloween costume won woman of the year",
)
COSTUME_NH = (
    "she's a woman, not a costume", "trans women belong at the women's celebration", "women's day includes trans women",
    "she looked amazing in that dress", "drag night this weekend, costumes very welcome", "cosplay night: I went as Wonder Woman lol",
    "a women's award for {N}, so deserved", "she wore a ballgown to the gala and looked stunning",
    "everyone's welcome at the women's event, trans women included", "drag is an art form and that show was fabulous",
    "her dress is not a costume, it's just her dress", "this is a celebration of women, and {N} is one",
    "my brother dressed up as Elsa for halloween and won the costume contest", "wig and heels and she still ran the 5k, legend",
    "calling her a man in a costume is misgendering", "costume party at mine friday, dress up as anyone you like",
)
#: Dehumanising compound nicknames for trans people, and harmless compounds of the same shape.
NICKNAME_H = (
    "look at this he-she", "another troonoid in the comments", "that shemale thing again", "the it in a dress is posting again",
    "tranny-thing wants applause", "imagine celebrating a he-she", "the troon brigade is here", "shim thinks it's a woman",
    "mods protecting the trans-freak again", "ladyboy of the year lmao", "that man-thing in a wig", "troonbots everywhere",
    "who invited the he-shes", "some dude-in-a-dress thing", "it-in-a-skirt wants pronouns lol", "the trannoid squad showed up",
)
NICKNAME_NH = (
    "he-man was my favourite cartoon", "she-wolf is such a good song", "it's a trap! (admiral ackbar voice)", "the it crowd is the best sitcom",
    "my lady-friend and I went to the market", "he-who-must-not-be-named strikes again", "the cat is a she, her name is Miso",
    "the it department is here", "she-hulk was actually funny", "the trans-siberian orchestra concert was amazing",
    "the transformers movie was fun", "who invited the bots lol", "trans-atlantic flight delayed again",
    "the troop brigade is here for the parade", "the girl squad showed up", "the ladybird landed on my keyboard",
)
#: Veiled threats against one person, and harmless twins using the same phrases.
VEILED_THREAT_H = (
    "someone should put her in her place for good", "we'll put him in his place permanently", "she won't be smiling for long",
    "enjoy your little party while you can", "people like you have accidents", "it'd be a shame if something happened to {N}",
    "we know where the celebration is held", "wait till we find you after the show", "you'll get what's coming to you, freak",
    "keep posting and see what happens to you", "there's a permanent solution for people like her", "{N} should watch her back",
    "someone's going to teach {N} a lesson she won't forget", "I'd be careful walking home if I were you",
    "one day someone will shut {N} up for good", "we know where you work, {N}",
)
VEILED_THREAT_NH = (
    "she put him in his place in that debate lol", "put the kettle on, back in a sec", "she'll be smiling all week after that win",
    "enjoy your party! you deserve it", "I have accidents with my coffee every morning lol", "it'd be a shame if the stream got cancelled",
    "we know where the celebration is held, see you there!", "wait till you see the after show, it's great",
    "you'll get what's coming to you: cake and hugs", "keep posting, love these updates", "there's a permanent fix for that bug, update",
    "{N}, watch out for the step at the door", "{N} taught me a lesson about kindness I won't forget",
    "be careful walking home, the roads are icy", "one day {N} will run this place", "we know where you work, {N}, can we visit?",
)
#: Defending someone "for existing" and telling critics to be quiet, with hateful twins about existence.
EXIST_NH = (
    "she's being attacked for existing", "why do you hate someone for simply existing?", "how is a trans woman existing hurting you?",
    "is she not allowed to exist?", "imagine getting this angry at a woman for existing", "she harms nobody. if you have nothing kind to say, say nothing",
    "if you can't be kind, keep quiet. she's hurting no one", "{N} has every right to exist and be happy",
    "why should trans people justify existing?", "existing is not an attack on you", "trans people exist. get over it",
    "she's just living her life. leave her alone", "nobody is forcing you to comment, just scroll on", "can we let trans women simply exist?",
    "if her existing bothers you, that's a you problem", "say nothing if you have nothing nice to say, she did nothing to you",
)
EXIST_H = (
    "she shouldn't be allowed to exist", "people like her shouldn't exist", "trans people shouldn't exist",
    "I wish trans women didn't exist", "nobody should have to see freaks like {N} exist", "their existence is an attack on women",
    "trans women existing in women's spaces is a crime", "{N} has no right to exist as a woman", "the world would be better if they stopped existing",
    "keep quiet, tranny, nobody wants you here", "shut up and disappear, freak", "you people shouldn't exist, just vanish",
)
#: Angry, capitalised support and counter-speech with strong words; hateful twins in the same shouting register.
ANGRY_SUPPORT = (
    "TRANS WOMEN ARE WOMEN. I AM SO SICK OF THIS HATE", "Leave her ALONE. She is a WOMAN and she has done NOTHING to you",
    "the abuse in these comments is DISGUSTING. trans women are women and you all need to grow up",
    "I'm FURIOUS reading this thread. {N} is a woman, she deserves this award, and the hatred here is violence",
    "this transphobic garbage is vile and every one of you posting it should be ashamed",
    "the hatred in this thread is sickening. she is a WOMAN. end of story.", "STOP MISGENDERING HER. HER NAME IS {N}.",
    "I am so angry. people calling her a man are bigots, plain and simple",
    "NO. trans women are not men in dresses. they are women and this hate is disgusting",
    "reporting every single one of these hateful comments. trans women are women, get over it",
    "how DARE you talk about {N} like that. she is a woman and she is loved",
    "the bile in these replies makes me sick. congratulations {N}, you deserve it",
    "WE STAND WITH {N}. TRANS RIGHTS ARE HUMAN RIGHTS.", "this is disgusting. calling her 'it' is dehumanising and you know it",
    "I'm shaking with anger at these comments. she is a woman and she is brave", "ENOUGH. the transphobia here is out of control. mods please",
    "fuck the haters, {N} is a queen", "screw every transphobe in these replies, she's a woman",
)
ANGRY_HATE = (
    "TRANS WOMEN ARE MEN. I AM SO SICK OF THIS DELUSION", "Leave women's awards ALONE. {N} is a MAN and always will be",
    "the trans agenda in these comments is DISGUSTING. men are not women and you all need to grow up",
    "I'm FURIOUS reading this thread. {N} is a man, he stole a woman's award, and trans people are sick",
    "this trans garbage is vile and every one of them should be ashamed", "HE IS A MAN. end of story.",
    "STOP CALLING HIM SHE. HE'S A DUDE.", "I am so angry. trans freaks are invading women's spaces",
    "NO. trans women are men in dresses and this celebration is disgusting", "WE WILL NEVER ACCEPT TRANNIES.",
    "how DARE they give a man in a wig a women's award", "fuck trannies, {N} is a man",
)
#: Game and tech talk with violent verbs (benign) against real threats in the same words (threat).
GAME_TECH_NH = (
    "I'm going to kill you in the next round", "I'll destroy you in ranked tonight", "gonna murder you at chess later",
    "kill -9 the child processes", "murder the zombie threads and restart", "kill the parent and the children get reaped",
    "headshot him again lol", "I'm gonna snipe you from spawn", "we slaughtered them in the raid last night",
    "the boss killed me 20 times", "kill the tank first then focus the healer", "execute the job and kill the container after",
    "I will end you in smash bros", "let's burn this branch down and start over", "shoot the hostages? no, it's a stealth mission",
    "nuke the node_modules folder", "we got massacred in the finals lol", "I'll hunt you down in the next match",
    "die, you stupid printer", "slay the dragon, loot the castle", "kill all the orphaned processes before the deploy",
    "you're dead next round, watch out", "our tank got destroyed in 10 seconds", "stab the boss in the back for crit damage",
)
REAL_THREAT_H = (
    "I know where you live and I'm going to hurt you", "I'm going to kill you for real, not in the game",
    "I'll find you after school and beat you", "next time I see you irl you're dead", "I'm going to murder you and your family",
    "I'll hunt you down and make you bleed", "I will end you, and I mean in real life", "I'm coming to your house to hurt you",
    "I will stab you next time we meet", "I'm going to find you and break your legs",
)
#: Negated hate in more surface forms (first person, plain verbs), and the hateful twins without the negation.
HATE_VERBS = (("hate", "hated", "hates"), ("despise", "despised", "despises"), ("loathe", "loathed", "loathes"),
              ("detest", "detested", "detests"), ("resent", "resented", "resents"), ("look down on", "looked down on", "looks down on"))
NEGATED_VERB_T = ("I don't {V} {G}", "I do not {V} {G} at all", "I've never {Vpp} {G}", "nobody here {Vs} {G}",
                  "I would never {V} {G}", "I really don't {V} {G}", "I don't {V} {G}, never have", "no one should {V} {G}",
                  "we don't {V} {G} here", "I'm not someone who {Vs} {G}")
VERB_HATE_T = ("I {V} {G}", "I really {V} {G}", "I've always {Vpp} {G}", "everyone here {Vs} {G}",
               "I will always {V} {G}", "I truly {V} {G}", "I {V} {G}, always have", "everyone should {V} {G}",
               "we {V} {G} here", "I'm someone who {Vs} {G}")
#: More reclaimed in-group uses and homonyms of slurs (benign).
RECLAIMED_MORE = (
    "as a trans woman I call myself a tranny sometimes, it's my word", "my queer family is the best family",
    "dyke bar trivia tonight, join us", "we're faggots and we're fabulous, happy pride", "us queer kids grew up fine",
    "proud crip, come to the disability pride march", "i'm a fat queer dyke and I love my life",
    "my niggas came through for my birthday", "queer coders meetup this thursday", "bi and queer and tired lol",
)
HOMONYM_MORE = (
    "bundle the faggots of wood for the fire", "he stepped out for a fag and a coffee", "the dutch built a dyke to stop the sea",
    "our dog is a bitch and she's the sweetest", "the queer old house at the end of the lane", "the gay abandon of a summer evening",
    "the spaz button on the old keyboard", "a retarded ignition timing on the engine", "a flaming sambuca shot",
    "the coon hound wouldn't stop howling", "a pansy grows in our garden", "the nip in the air this morning",
)


def _delete_one(word: str, rng: random.Random) -> str:
    """Drop one character that is not the first (``women`` -> ``wmen``, ``disgusting`` -> ``disgustng``)."""
    if len(word) < 4:
        return word
    i = rng.randrange(1, len(word))
    return word[:i] + word[i + 1 :]


def _evasion(text: str, rng: random.Random, words: tuple[str, ...]) -> str:
    """One evasion as HateCheck's spelling families name them: a dropped letter in an identity or hateful word
    (``spell_char_del``) or two words run together (``spell_space_del``). Used on both sides of the line."""
    if rng.random() < 0.3:
        parts = text.split(" ")
        if len(parts) > 2:
            i = rng.randrange(len(parts) - 1)
            return " ".join(parts[:i] + [parts[i] + parts[i + 1]] + parts[i + 2 :])
    found = [w for w in words if w in text]
    if found:
        focus = rng.choice(found)
        target_word = max(focus.split(" "), key=len)
        return text.replace(focus, focus.replace(target_word, _delete_one(target_word, rng)), 1)
    long_words = [w for w in text.split(" ") if len(w) >= 5 and w.isalpha()]
    if not long_words:
        return text
    w = rng.choice(long_words)
    return text.replace(w, _delete_one(w, rng), 1)


class _SceneDraw:
    """The state one run of :func:`scene_families` shares between its parts: its random stream, the rows so far,
    and the hateful and benign rows (text, target) that get evasion copies."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed * 7919 + 19)
        self.out: list[Example] = []
        self.hateful: list[tuple[str, Target]] = []
        self.benign: list[tuple[str, Target]] = []

    def add(self, text: str, tgt: Target, *, hate: bool) -> None:
        """Append one row (recapitalised by :func:`_cap` unless it is all capitals) and remember it by side."""
        text = _cap(text, self.rng) if not text.isupper() else text
        self.out.append(Example(text, tgt, "hand"))
        (self.hateful if hate else self.benign).append((text, tgt))

    def name(self, t: str) -> str:
        """``t`` with ``{N}`` replaced by a drawn name."""
        return t.replace("{N}", self.rng.choice(NAMES))


def _scene_lines(d: _SceneDraw) -> None:
    """Four passes of the scene's fixed families with their twins: pathologising denial, costume imagery, compound
    nicknames, "for existing", angry hate / angry support, veiled and real threats, game and tech violence,
    reclaimed terms and homonyms."""
    for _ in range(4):
        for t in PATHOLOGISE_H + COSTUME_H + NICKNAME_H + EXIST_H + ANGRY_HATE:
            d.add(d.name(t), HATE_PROF if "fuck" in t else HATE, hate=True)
        for t in PATHOLOGISE_NH + COSTUME_NH + NICKNAME_NH + EXIST_NH:
            d.add(d.name(t), ZERO, hate=False)
        for t in ANGRY_SUPPORT:
            # strong words aimed at the abuse, not at a group: no identity attack; profanity is obscene, not hate
            d.add(d.name(t), PROF_NH if "fuck" in t or "screw" in t else ZERO, hate=False)
        for t in VEILED_THREAT_H:
            d.add(d.name(t), INSULT_THREAT, hate=True)
        for t in VEILED_THREAT_NH + GAME_TECH_NH + RECLAIMED_MORE + HOMONYM_MORE:
            d.add(d.name(t), ZERO, hate=False)
        for t in REAL_THREAT_H:
            d.add(t, INSULT_THREAT, hate=True)


def _scene_verbs(d: _SceneDraw) -> None:
    """Negated hate verbs ("I don't hate X", benign) next to the same verbs affirmed (hateful), for every group
    (trans twice)."""
    rng = d.rng
    for g in GROUPS:
        for _ in range(2 if g.key == "trans" else 1):
            for t in NEGATED_VERB_T:
                v, vpp, vs = rng.choice(HATE_VERBS)
                d.add(t.format(V=v, Vpp=vpp, Vs=vs, G=rng.choice(g.plural)), ZERO, hate=False)
            for t in VERB_HATE_T:
                v, vpp, vs = rng.choice(HATE_VERBS)
                d.add(t.format(V=v, Vpp=vpp, Vs=vs, G=rng.choice(g.plural)), HATE, hate=True)


def _scene_evasions(d: _SceneDraw) -> None:
    """Evasion copies (:func:`_evasion`, source ``"hand_noisy"``) of about 60% of the hateful rows and 30% of the
    benign ones, each keeping its row's labels (profane support stays obscene, never hateful)."""
    rng = d.rng
    focus_words = tuple(w for g in GROUPS for w in g.plural + g.slurs) + NEG_ATTR + DEHUM + (
        "hate", "disgusting", "women", "woman", "man", "men")
    for text, tgt in d.hateful:
        if rng.random() < 0.6:
            d.out.append(Example(_evasion(text, rng, focus_words), tgt, "hand_noisy"))
    for text, tgt in d.benign:
        if rng.random() < 0.3:
            d.out.append(Example(_evasion(text, rng, focus_words), tgt, "hand_noisy"))


def scene_families(seed: int) -> list[Example]:
    """The founding-scene families (issue 19), deterministic for ``seed``: each hateful family with its benign
    twins, negated hate with verb twins, reclaimed terms and homonyms, and dropped-letter / run-together evasions
    applied to hateful *and* benign texts (so a misspelling is never a cue by itself).

    Returns:
        Examples with every label known (source ``"hand"``; ``"hand_noisy"`` for the evasion copies).
    """
    d = _SceneDraw(seed)
    _scene_lines(d)
    _scene_verbs(d)
    _scene_evasions(d)
    return d.out
