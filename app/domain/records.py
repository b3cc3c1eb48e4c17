"""Resource records as plain values, independent of any wire codec."""

from __future__ import annotations

from dataclasses import dataclass

from app.domain.model import IPAddress, StaticData, Zone
from app.domain.query import RType

SOA_TTL = 3600
NS_TTL = 3600
SOA_REFRESH, SOA_RETRY, SOA_EXPIRE = 3600, 600, 604800


@dataclass(frozen=True, slots=True)
class Soa:
    mname: str
    rname: str
    serial: int
    refresh: int
    retry: int
    expire: int
    minimum: int


@dataclass(frozen=True, slots=True)
class Srv:
    priority: int
    weight: int
    port: int
    target: str


# RFC 3263 §4.1: the NAPTR service of each SIP transport's SRV service, and
# the preference `"naptr": true` gives it (TLS first, then TCP, then UDP).
NAPTR_SERVICES = {
    "_sips._tcp": "SIPS+D2T",
    "_sip._tls": "SIPS+D2T",  # the older spelling some SBCs still publish
    "_sip._tcp": "SIP+D2T",
    "_sip._udp": "SIP+D2U",
}
NAPTR_ORDER = 10
NAPTR_PREFERENCE = {"_sips._tcp": 10, "_sip._tls": 10, "_sip._tcp": 20, "_sip._udp": 30}


@dataclass(frozen=True, slots=True)
class Naptr:
    """RFC 3403; flags "s" and no regexp: the replacement is an SRV name."""

    order: int
    preference: int
    service: str  # "SIP+D2U"
    replacement: str
    flags: str = "s"
    regexp: str = ""


@dataclass(frozen=True, slots=True)
class Hinfo:
    cpu: str
    os: str


# StaticData: a static rrset's record, already in wire form (app.domain.model)
RData = IPAddress | str | Soa | Srv | Hinfo | Naptr | StaticData


@dataclass(frozen=True, slots=True)
class Record:
    name: str
    rtype: RType
    ttl: int
    rdata: RData


def mailbox_name(email: str) -> str:
    """RFC 1035 §8: `hostmaster@tm.example` is written `hostmaster.tm.example.`."""
    local, _, domain = email.rstrip(".").partition("@")
    local = local.replace(".", "\\.")
    return f"{local}.{domain}." if domain else f"{local}."


def soa_record(zone: Zone, serial: int) -> Record:
    """The zone's SOA; the serial follows the configuration generation (DESIGN §2)."""
    mname = zone.ns[0] if zone.ns else zone.name
    soa = Soa(
        mname=mname,
        rname=mailbox_name(zone.soa_email),
        serial=serial % 2**32,
        refresh=SOA_REFRESH,
        retry=SOA_RETRY,
        expire=SOA_EXPIRE,
        minimum=zone.negative_ttl,
    )
    return Record(zone.name, RType.SOA, SOA_TTL, soa)


def negative_soa(soa: Record) -> Record:
    """RFC 2308 §3: the SOA in a negative answer carries the negative-caching TTL."""
    assert isinstance(soa.rdata, Soa)
    return Record(soa.name, soa.rtype, min(soa.ttl, soa.rdata.minimum), soa.rdata)


MINIMAL_ANY = Hinfo("RFC8482", "")


def any_record(name: str) -> Record:
    """RFC 8482 §4.2: the minimal answer to ANY is one synthesized HINFO."""
    return Record(name, RType.HINFO, SOA_TTL, MINIMAL_ANY)


def address_record(name: str, address: IPAddress, ttl: int) -> Record:
    return Record(name, RType.A if address.version == 4 else RType.AAAA, ttl, address)
