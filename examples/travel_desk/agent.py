"""The travel desk: an agent of four tools that answers travellers' questions about sixteen world cities.

Everything fgpo needs from a user's agent is in :data:`BENCHMARK` (an :class:`fgpo_lib.agent.AgentBenchmark`):

* **questions** (:func:`questions`): 52 questions of four kinds, 13 each, generated from ``cities.csv`` with their
  gold answers: which country a city is in, the local time there at a given UTC hour, the great-circle distance
  between two cities (to the nearest 100 km), and which of two cities has more people;
* **tools**: ``atlas`` (country, capital or not), ``clock`` (UTC offset, and the local time at the question's UTC
  hour), ``distance`` (great-circle kilometres between the first two cities named) and ``census`` (population).
  Each reads the question's text and the city table, and each writes something about every city it finds, so a tool
  the question does not need is a distractor;
* **score** (:func:`score`): 1 if the answer states the gold answer (a country, an ``HH:MM`` time, a distance within
  50 km of the gold's hundred, or the larger city and not the smaller), else 0.

A reasoner can be any built-in one, an OpenAI-compatible endpoint (``openai-http``, which gets :data:`INSTRUCTIONS`
and :data:`EXAMPLES` as its prompt), or a Python function; :func:`answer` is one: an extractive reader that reads the
needed tool's line and answers, or says it cannot.

Data: ``cities.csv``, sixteen cities with their country, whether it is the capital, coordinates (degrees, two
decimals), standard-time UTC offset and population of the city proper in millions, from the cities' Wikipedia
articles (2024), for this example only.
"""

from __future__ import annotations

import csv
import math
import re
from pathlib import Path

from fgpo_lib.agent import AgentBenchmark, AgentQuestion, AgentTool

DATA = Path(__file__).with_name("cities.csv")


def _cities() -> dict[str, dict]:
    with DATA.open() as fh:
        rows = list(csv.DictReader(fh))
    return {r["city"]: {**r, "lat": float(r["lat"]), "lon": float(r["lon"]), "utc_offset": float(r["utc_offset"]),
                        "population_millions": float(r["population_millions"])} for r in rows}


CITIES = _cities()
NAMES = tuple(CITIES)


def cities_in(text: str) -> list[str]:
    """The cities a text names, in the order it names them."""
    found = [(m.start(), name) for name in NAMES for m in re.finditer(rf"\b{re.escape(name)}\b", text)]
    return [name for _, name in sorted(found)]


def km(a: str, b: str) -> float:
    """Great-circle distance in kilometres (haversine, Earth radius 6371 km)."""
    (la1, lo1), (la2, lo2) = ((math.radians(CITIES[c]["lat"]), math.radians(CITIES[c]["lon"])) for c in (a, b))
    h = math.sin((la2 - la1) / 2) ** 2 + math.cos(la1) * math.cos(la2) * math.sin((lo2 - lo1) / 2) ** 2
    return 2 * 6371 * math.asin(math.sqrt(h))


def local_time(utc_hour: int, city: str) -> str:
    """``HH:MM`` in ``city`` when it is ``utc_hour``:00 UTC (standard time)."""
    minutes = int(round((utc_hour + CITIES[city]["utc_offset"]) * 60)) % (24 * 60)
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def _utc_hour(text: str) -> int | None:
    m = re.search(r"\b(\d{1,2}):00 UTC\b", text)
    return int(m.group(1)) if m else None


# --- the tools: the question's text in, one line of text out -----------------------------------------------------------
def atlas(question: str) -> str:
    found = cities_in(question)
    return " | ".join(f"{c}: {CITIES[c]['country']}" + (" (capital)" if CITIES[c]["capital"] == "yes" else "") for c in found) or "no city found"


def clock(question: str) -> str:
    hour, found = _utc_hour(question), cities_in(question)
    parts = []
    for c in found:
        off = CITIES[c]["utc_offset"]
        sign = "+" if off >= 0 else "-"
        zone = f"UTC{sign}{abs(off):g}".replace(".5", ":30")
        parts.append(f"{c}: {zone}" + (f", so {hour:02d}:00 UTC is {local_time(hour, c)} there" if hour is not None else ""))
    return " | ".join(parts) or "no city found"


def distance(question: str) -> str:
    found = cities_in(question)
    if len(found) < 2:
        return "needs two cities"
    a, b = found[:2]
    return f"{a} to {b}: {km(a, b):,.0f} km (great circle)"


def census(question: str) -> str:
    found = cities_in(question)
    return " | ".join(f"{c}: {CITIES[c]['population_millions']:.2f} million people" for c in found) or "no city found"


TOOLS = (
    AgentTool("atlas", "the country of each city named, and whether it is the capital", atlas),
    AgentTool("clock", "each city's UTC offset, and its local time at the UTC hour the question gives", clock),
    AgentTool("distance", "the great-circle distance in km between the first two cities named", distance),
    AgentTool("census", "the population of each city named (city proper, millions)", census),
)


# --- the questions and their gold answers -----------------------------------------------------------------------------
TASKS = ("country", "local time", "distance", "larger city")


def questions() -> list[AgentQuestion]:
    """13 questions of each task, from a fixed walk over the city table (the same list on every machine)."""
    out, n = [], len(NAMES)
    for i in range(13):
        a, b = NAMES[i % n], NAMES[(5 * i + 3) % n]
        if a == b:
            b = NAMES[(5 * i + 4) % n]
        hour = (7 * i + 2) % 24
        out += [
            AgentQuestion(f"country-{i:02d}", f"Which country is {a} in?", CITIES[a]["country"], "country"),
            AgentQuestion(f"time-{i:02d}", f"When it is {hour:02d}:00 UTC, what time is it in {b} (standard time, 24-hour clock)?", local_time(hour, b), "local time"),
            AgentQuestion(f"distance-{i:02d}", f"How far is it from {a} to {b}, in kilometres (great circle, to the nearest 100)?",
                          str(int(round(km(a, b), -2))), "distance"),
            AgentQuestion(f"larger-{i:02d}", f"Which city has more people, {b} or {a}?",
                          max((a, b), key=lambda c: CITIES[c]["population_millions"]), "larger city"),
        ]
    return out


def score(answer: str, gold: str) -> float:
    """1 if ``answer`` states ``gold`` (module doc), else 0."""
    text = answer.strip()
    if re.fullmatch(r"\d{2}:\d{2}", gold):  # a time
        m = re.search(r"\b(\d{1,2}):(\d{2})\b", text)
        return float(bool(m) and f"{int(m.group(1)):02d}:{m.group(2)}" == gold)
    if gold.isdigit():  # a distance to the nearest 100 km
        m = re.search(r"\d[\d,]*", text)
        return float(bool(m) and abs(int(m.group(0).replace(",", "")) - int(gold)) <= 50)
    if gold in CITIES:  # the larger of two cities: it, and not the other
        named = set(cities_in(text))
        return float(named == {gold})
    return float(gold.lower() in text.lower())  # a country


# --- what a generative reasoner is told --------------------------------------------------------------------------------
INSTRUCTIONS = ("You answer a traveller's question using only the tool outputs given. Reply with the answer alone: a country, a time such "
                "as 21:00, a distance in kilometres such as 1100, or a city.")
#: two worked examples, on questions that are not in the benchmark: the two cities and the hour are outside its walk
EXAMPLES = (
    ("When it is 23:00 UTC, what time is it in Lima (standard time, 24-hour clock)?", "[clock] " + clock("When it is 23:00 UTC, what time is it in Lima?"), "18:00"),
    ("Which city has more people, Toronto or Sydney?", "[census] " + census("Toronto or Sydney"), "Sydney"),
)


def answer(question: str, tool_outputs: list[str]) -> str:
    """An extractive reader of the tools' outputs (a reasoner as a Python function): the line of the tool the
    question needs, read by pattern; ``unknown`` when that tool was not called."""
    by_tool = {o.split("]", 1)[0].lstrip("["): o.split("] ", 1)[-1] for o in tool_outputs}
    text = question.lower()
    found = cities_in(question)
    if text.startswith("which country") and "atlas" in by_tool:
        m = re.search(rf"{re.escape(found[0])}: ([^|(]+)", by_tool["atlas"]) if found else None
        return m.group(1).strip() if m else "unknown"
    if "utc" in text and "clock" in by_tool:
        m = re.search(r"is (\d{2}:\d{2}) there", by_tool["clock"])
        return m.group(1) if m else "unknown"
    if text.startswith("how far") and "distance" in by_tool:
        m = re.search(r": ([\d,]+) km", by_tool["distance"])
        return str(int(round(int(m.group(1).replace(",", "")), -2))) if m else "unknown"
    if text.startswith("which city has more people") and "census" in by_tool:
        pops = {c: float(v) for c, v in re.findall(r"([A-Z][\w ]+?): ([\d.]+) million", by_tool["census"])}
        return max(pops, key=pops.get) if pops else "unknown"
    return "unknown"


BENCHMARK = AgentBenchmark(name="travel-desk", title="Travel desk (worked example)", questions=questions, tools=TOOLS, score=score,
                           instructions=INSTRUCTIONS, examples=EXAMPLES)
