"""Quarantine: a stored profile that could not be loaded or compiled.

One bad row must never stop the fleet: the profile is left out of the new
snapshot, or keeps answering with its last good version when this process
has one, and everything else goes on following changes.
"""

from __future__ import annotations

from dataclasses import replace

from app.domain.model import Config, Profile, Quarantined


def keep_last_good(config: Config, previous: Config) -> Config:
    """`config` with what failed to load (`config.broken`) put back as it was
    in `previous`: a profile in the same zone, or a whole zone (broken under
    minus its id) with the profiles it had."""
    if not config.broken:
        return config
    old_profiles: dict[tuple[int, int], Profile] = {
        (z.id, p.id): p for z in previous.zones for p in z.profiles
    }
    old_zones = {z.id: z for z in previous.zones}
    broken: dict[int, Quarantined] = dict(config.broken)
    zones = list(config.zones)
    present = {z.id for z in zones}
    for key, q in config.broken.items():
        if key < 0 and -key in old_zones and -key not in present:
            zones.append(old_zones[-key])
            broken[key] = q.keeping()
    for i, zone in enumerate(zones):
        if zone.id not in present:
            continue  # a whole zone brought back: its profiles came with it
        kept = [
            old_profiles[(zone.id, key)]
            for key in config.broken
            if (zone.id, key) in old_profiles
        ]
        if kept:
            for profile in kept:
                broken[profile.id] = broken[profile.id].keeping()
            profiles = sorted((*zone.profiles, *kept), key=lambda p: p.id)
            zones[i] = replace(zone, profiles=tuple(profiles))
    zones.sort(key=lambda z: z.id)
    return replace(config, zones=tuple(zones), broken=broken)
