"""Local indexes over the recorded real NCBI Web API responses (``fgpo_lib/data/genegpt/``).

Every fact here is parsed from a response NCBI actually returned in spring 2023 (GeneGPT's logs; see the data
README). Nothing is hand-written. The parsers read each format the logs hold:

* gene records: ``esummary`` JSON and XML, and ``efetch`` gene "text" records;
* gene searches: ``esearch`` JSON (term -> ordered Entrez IDs), which also give Ensembl -> Entrez ID;
* SNP summaries: ``esummary`` JSON and ``efetch`` XML document summaries;
* OMIM: ``esearch`` (disease term -> MIM numbers) and ``esummary`` (MIM number -> title, locus);
* BLAST: ``CMD=Put`` (query sequence -> RID) and ``CMD=Get`` text reports (RID -> hits).

Search terms are normalised by :func:`norm_term` (lower case, ``+`` as space, collapsed whitespace).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path

DATA_DIR = Path(str(resources.files("fgpo_lib") / "data" / "genegpt"))
RESPONSES = DATA_DIR / "ncbi_api_responses.jsonl.gz"


def norm_term(term: str) -> str:
    return re.sub(r"\s+", " ", term.replace("+", " ")).strip().lower()


@dataclass
class GeneRecord:
    gene_id: str
    symbol: str = ""
    name: str = ""
    organism: str = ""
    aliases: tuple[str, ...] = ()
    chromosome: str = ""
    map_location: str = ""
    summary: str = ""
    genomic: str = ""  # "NC_000016.10:67934506-67936850"
    mim: tuple[str, ...] = ()
    nomenclature_status: str = ""

    def merge(self, other: "GeneRecord") -> None:
        """Fill this record's empty fields from ``other`` (same gene ID)."""
        for f in self.__dataclass_fields__:
            if not getattr(self, f) and getattr(other, f):
                setattr(self, f, getattr(other, f))


@dataclass
class SnpRecord:
    rsid: str  # "rs1217074595"
    genes: tuple[tuple[str, str], ...] = ()  # ((symbol, gene_id), ...)
    chromosome: str = ""
    position: str = ""  # "NC_000022.11:43709040" (SPDI, 0-based)
    function_class: str = ""
    clinical_significance: str = ""


@dataclass
class OmimEntry:
    mim: str
    oid: str  # "#121850" (phenotype) or "*609414" (gene)
    title: str
    alt_titles: str = ""
    locus: str = ""


@dataclass
class BlastHit:
    accession: str
    description: str
    length: int
    score_bits: float
    evalue: str
    identities: str  # "128/128 (100%)"
    strand: str
    subject_start: int
    subject_end: int


@dataclass
class NcbiReplay:
    """All indexes. Build with :func:`load_replay` (cached)."""

    genes: dict[str, GeneRecord] = field(default_factory=dict)
    gene_search: dict[str, list[str]] = field(default_factory=dict)  # normalised term -> Entrez IDs
    ensembl: dict[str, str] = field(default_factory=dict)  # ENSG... -> Entrez ID
    symbol_index: dict[str, list[str]] = field(default_factory=dict)  # upper-case symbol or alias -> IDs
    snps: dict[str, SnpRecord] = field(default_factory=dict)
    omim_search: dict[str, list[str]] = field(default_factory=dict)  # normalised disease term -> MIM numbers
    omim: dict[str, OmimEntry] = field(default_factory=dict)
    blast: dict[str, list[BlastHit]] = field(default_factory=dict)  # upper-case query sequence -> hits
    sha256: str = ""

    def genes_by_name(self, name: str) -> list[str]:
        """Entrez IDs for a symbol/alias/Ensembl ID/search term: recorded esearch first, then the record index."""
        hits = self.gene_search.get(norm_term(name))
        if hits:
            return hits
        if name.upper().startswith("ENSG") and name.upper() in self.ensembl:
            return [self.ensembl[name.upper()]]
        return self.symbol_index.get(name.upper(), [])


# --- parsers ------------------------------------------------------------------------------------------------------
def _json(text: str):
    try:
        return json.loads(text)
    except ValueError:
        return None


def _gene_from_esummary_json(uid: str, d: dict) -> GeneRecord:
    info = (d.get("genomicinfo") or [{}])[0]
    genomic = f"{info['chraccver']}:{info['chrstart']}-{info['chrstop']}" if info.get("chraccver") else ""
    org = d.get("organism") or {}
    return GeneRecord(
        gene_id=uid,
        symbol=d.get("name", ""),
        name=d.get("description", ""),
        organism=org.get("scientificname", ""),
        aliases=tuple(a.strip() for a in (d.get("otheraliases") or "").split(",") if a.strip()),
        chromosome=d.get("chromosome", ""),
        map_location=d.get("maplocation", ""),
        summary=d.get("summary", ""),
        genomic=genomic,
        mim=tuple(d.get("mim") or ()),
        nomenclature_status=d.get("nomenclaturestatus", ""),
    )


def _gene_from_esummary_xml(doc: ET.Element) -> GeneRecord:
    t = lambda tag: (doc.findtext(tag) or "").strip()  # noqa: E731
    info = doc.find("GenomicInfo/GenomicInfoType")
    genomic = ""
    if info is not None and info.findtext("ChrAccVer"):
        genomic = f"{info.findtext('ChrAccVer')}:{info.findtext('ChrStart')}-{info.findtext('ChrStop')}"
    return GeneRecord(
        gene_id=doc.get("uid", ""),
        symbol=t("Name"),
        name=t("Description"),
        organism=t("Organism/ScientificName"),
        aliases=tuple(a.strip() for a in t("OtherAliases").split(",") if a.strip()),
        chromosome=t("Chromosome"),
        map_location=t("MapLocation"),
        summary=t("Summary"),
        genomic=genomic,
        mim=tuple(i.text.strip() for i in doc.findall("Mim/int") if i.text),
        nomenclature_status=t("NomenclatureStatus"),
    )


_EFETCH_RECORD = re.compile(r"^\d+\. (\S+)\n(.*?)(?=^\d+\. \S+\n|\Z)", re.S | re.M)


def _genes_from_efetch_text(text: str) -> list[GeneRecord]:
    out = []
    for _, body in _EFETCH_RECORD.findall(text):
        def field_(name: str) -> str:
            m = re.search(rf"^{name}:\s*(.*)$", body, re.M)
            return m.group(1).strip() if m else ""

        gid = field_("ID")
        if not gid:
            continue
        m = re.search(r"Official Symbol:\s*(\S+)\s+and Name:\s*(.*?)\s*\[(.*?)\]", body)
        sym_name = re.search(r"^Name:\s*(.*?)\s*\[(.*?)\]", body, re.M)
        chrom = re.search(r"Chromosome:\s*([^;\n]+)(?:;\s*Location:\s*(\S+))?", body)
        ann = re.search(r"Annotation:\s*Chromosome \S+ (\S+) \((\d+)\.\.(\d+)", body)
        out.append(
            GeneRecord(
                gene_id=gid,
                symbol=m.group(1) if m else "",
                name=m.group(2) if m else (sym_name.group(1) if sym_name else ""),
                organism=(m.group(3) if m else (sym_name.group(2) if sym_name else "")).split(" (")[0],
                aliases=tuple(a.strip() for a in field_("Other Aliases").split(",") if a.strip()),
                chromosome=chrom.group(1).strip() if chrom else "",
                map_location=(chrom.group(2) or "") if chrom else "",
                genomic=f"{ann.group(1)}:{ann.group(2)}-{ann.group(3)}" if ann else "",
                mim=tuple(x for x in [field_("MIM")] if x),
            )
        )
    return out


def _snp_from_json(uid: str, d: dict) -> SnpRecord:
    spdi = (d.get("spdi") or "").split(",")[0]
    return SnpRecord(
        rsid=f"rs{uid}",
        genes=tuple((g.get("name", ""), str(g.get("gene_id", ""))) for g in d.get("genes") or []),
        chromosome=d.get("chr", ""),
        position=":".join(spdi.split(":")[:2]) if spdi else "",
        function_class=d.get("fxn_class", ""),
        clinical_significance=d.get("clinical_significance", ""),
    )


def _snp_from_xml(doc: ET.Element) -> SnpRecord:
    t = lambda tag: (doc.findtext(tag) or "").strip()  # noqa: E731
    spdi = t("SPDI").split(",")[0]
    return SnpRecord(
        rsid=f"rs{doc.get('uid') or t('SNP_ID')}",
        genes=tuple(((g.findtext("NAME") or "").strip(), (g.findtext("GENE_ID") or "").strip()) for g in doc.findall("GENES/GENE_E")),
        chromosome=t("CHR"),
        position=":".join(spdi.split(":")[:2]) if spdi else "",
        function_class=t("FXN_CLASS"),
        clinical_significance=t("CLINICAL_SIGNIFICANCE"),
    )


_HIT_HEAD = re.compile(r"^>(\S+) (.*?)\nLength=(\d+)", re.S | re.M)


def parse_blast_text(report: str) -> list[BlastHit]:
    """Hits of a BLAST text report, first HSP of each, in report order. A cut-off report yields its whole hits."""
    if "ALIGNMENTS" not in report:
        return []
    body = report.split("ALIGNMENTS", 1)[1]
    blocks = re.split(r"^(?=>)", body, flags=re.M)
    hits = []
    for block in blocks:
        head = _HIT_HEAD.match(block)
        if not head:
            continue
        score = re.search(r"Score = ([\d.]+) bits.*?Expect = (\S+)", block)
        ident = re.search(r"Identities = (\S+ \(\d+%\))", block)
        strand = re.search(r"Strand=(\S+)", block)
        sbjct = re.findall(r"^Sbjct\s+(\d+)\s+\S+\s+(\d+)", block, re.M)
        if not (score and ident and sbjct):
            continue  # the report was cut inside this hit
        first_hsp_end = block.find("Score =", block.find("Score =") + 1)
        hsp = block if first_hsp_end < 0 else block[:first_hsp_end]
        sb = re.findall(r"^Sbjct\s+(\d+)\s+\S+\s+(\d+)", hsp, re.M)
        hits.append(
            BlastHit(
                accession=head.group(1),
                description=re.sub(r"\s+", " ", head.group(2)).strip(),
                length=int(head.group(3)),
                score_bits=float(score.group(1)),
                evalue=score.group(2).rstrip(","),
                identities=ident.group(1),
                strand=strand.group(1) if strand else "",
                subject_start=int(sb[0][0]),
                subject_end=int(sb[-1][1]),
            )
        )
    return hits


def build_replay(path: Path = RESPONSES) -> NcbiReplay:
    """Parse every recorded response in ``path`` into an :class:`NcbiReplay`."""
    raw = path.read_bytes()
    rp = NcbiReplay(sha256=hashlib.sha256(raw).hexdigest())
    rows = [json.loads(line) for line in gzip.decompress(raw).decode().splitlines()]
    rids_of_query: dict[str, list[str]] = {}
    reports: dict[str, list[BlastHit]] = {}

    def add_gene(rec: GeneRecord) -> None:
        if rec.gene_id in rp.genes:
            rp.genes[rec.gene_id].merge(rec)
        else:
            rp.genes[rec.gene_id] = rec

    for r in rows:
        api, db, text, params = r["api"], r["db"], r["response"], r["params"]
        if api == "esearch" and db in ("gene", "omim"):
            d = _json(text)
            term = params.get("term")
            if not d or not isinstance(term, str) or "esearchresult" not in d:
                continue
            ids = d["esearchresult"].get("idlist", [])
            target = rp.gene_search if db == "gene" else rp.omim_search
            target.setdefault(norm_term(term), ids)
            if db == "gene" and re.fullmatch(r"ENSG\d+", term.strip().upper()) and ids:
                rp.ensembl[term.strip().upper()] = ids[0]
        elif api == "esummary" and db == "gene":
            d = _json(text)
            if d and "result" in d:
                for uid in d["result"].get("uids", []):
                    add_gene(_gene_from_esummary_json(uid, d["result"][uid]))
            elif "<DocumentSummary" in text:
                try:
                    root = ET.fromstring(text.encode())
                except ET.ParseError:
                    continue
                for doc in root.iter("DocumentSummary"):
                    if doc.findtext("Name"):
                        add_gene(_gene_from_esummary_xml(doc))
        elif api == "efetch" and db == "gene":
            for rec in _genes_from_efetch_text(text):
                add_gene(rec)
        elif api in ("esummary", "efetch") and db == "snp":
            d = _json(text)
            if d and "result" in d:
                for uid in d["result"].get("uids", []):
                    rec = _snp_from_json(uid, d["result"][uid])
                    rp.snps.setdefault(rec.rsid, rec)
            elif "<DocumentSummary" in text:
                for m in re.finditer(r"<DocumentSummary.*?</DocumentSummary>", text, re.S):
                    try:
                        rec = _snp_from_xml(ET.fromstring(m.group(0)))
                    except ET.ParseError:
                        continue
                    rp.snps.setdefault(rec.rsid, rec)
        elif api == "esummary" and db == "omim":
            d = _json(text)
            if d and "result" in d:
                for uid in d["result"].get("uids", []):
                    e = d["result"][uid]
                    rp.omim.setdefault(uid, OmimEntry(uid, e.get("oid", ""), e.get("title", ""), e.get("alttitles", ""), e.get("locus", "")))
        elif api == "blast_put":
            q = params.get("QUERY")
            if isinstance(q, str) and text.strip():
                rids_of_query.setdefault(q.strip().upper(), []).append(text.strip())
        elif api == "blast_get":
            rid = params.get("RID")
            hits = parse_blast_text(text)
            if isinstance(rid, str) and hits and len(hits) > len(reports.get(rid, [])):
                reports[rid] = hits
    for query, rids in rids_of_query.items():
        found = [reports[rid] for rid in rids if rid in reports]
        if found:
            rp.blast[query] = max(found, key=len)  # the recorded report with the most complete hits
    for gid, rec in rp.genes.items():
        for name in (rec.symbol, *rec.aliases):
            if name:
                ids = rp.symbol_index.setdefault(name.upper(), [])
                if gid not in ids:
                    ids.append(gid)
    return rp


@lru_cache(maxsize=1)
def load_replay() -> NcbiReplay:
    """The packaged replay indexes, built once per process."""
    return build_replay()
