"""Well-known cloud regions and their approximate coordinates (the city of the
region's data centres), for performance routing by great-circle distance.
Pure data.

Keys are lowercase ``<provider>:<region id>`` with providers ``aws`` (the
standard partition: no GovCloud, China or sovereign-cloud regions), ``azure``
and ``gcp``. Values are ``(latitude, longitude)`` in degrees, south and west
negative, to about 0.1 degree of the named city; where a provider only names a
state or country, the city is the one its data centres are best known for.
"""

from collections.abc import Mapping
from types import MappingProxyType

Coordinates = tuple[float, float]

REGIONS: Mapping[str, Coordinates] = MappingProxyType(
    {
        # Amazon Web Services
        "aws:us-east-1": (39.0, -77.5),  # N. Virginia (Ashburn)
        "aws:us-east-2": (40.0, -83.0),  # Ohio (Columbus)
        "aws:us-west-1": (37.3, -121.9),  # N. California (San Jose)
        "aws:us-west-2": (45.8, -119.7),  # Oregon (Boardman)
        "aws:ca-central-1": (45.5, -73.6),  # Montréal
        "aws:ca-west-1": (51.0, -114.1),  # Calgary
        "aws:mx-central-1": (20.6, -100.4),  # Querétaro
        "aws:sa-east-1": (-23.5, -46.6),  # São Paulo
        "aws:eu-west-1": (53.3, -6.3),  # Dublin
        "aws:eu-west-2": (51.5, -0.1),  # London
        "aws:eu-west-3": (48.9, 2.4),  # Paris
        "aws:eu-central-1": (50.1, 8.7),  # Frankfurt
        "aws:eu-central-2": (47.4, 8.5),  # Zurich
        "aws:eu-north-1": (59.3, 18.1),  # Stockholm
        "aws:eu-south-1": (45.5, 9.2),  # Milan
        "aws:eu-south-2": (41.6, -0.9),  # Aragón (Zaragoza)
        "aws:il-central-1": (32.1, 34.8),  # Tel Aviv
        "aws:me-south-1": (26.2, 50.6),  # Bahrain (Manama)
        "aws:me-central-1": (25.2, 55.3),  # UAE (Dubai)
        "aws:af-south-1": (-33.9, 18.4),  # Cape Town
        "aws:ap-east-1": (22.3, 114.2),  # Hong Kong
        "aws:ap-east-2": (25.0, 121.6),  # Taipei
        "aws:ap-south-1": (19.1, 72.9),  # Mumbai
        "aws:ap-south-2": (17.4, 78.5),  # Hyderabad
        "aws:ap-northeast-1": (35.7, 139.7),  # Tokyo
        "aws:ap-northeast-2": (37.6, 127.0),  # Seoul
        "aws:ap-northeast-3": (34.7, 135.5),  # Osaka
        "aws:ap-southeast-1": (1.3, 103.8),  # Singapore
        "aws:ap-southeast-2": (-33.9, 151.2),  # Sydney
        "aws:ap-southeast-3": (-6.2, 106.8),  # Jakarta
        "aws:ap-southeast-4": (-37.8, 145.0),  # Melbourne
        "aws:ap-southeast-5": (3.1, 101.7),  # Malaysia (Kuala Lumpur)
        "aws:ap-southeast-6": (-36.8, 174.8),  # New Zealand (Auckland)
        "aws:ap-southeast-7": (13.8, 100.5),  # Thailand (Bangkok)
        # Microsoft Azure
        "azure:eastus": (37.4, -79.8),  # Virginia (Microsoft's point, near Roanoke)
        "azure:eastus2": (36.7, -78.4),  # Virginia (Boydton)
        "azure:centralus": (41.6, -93.6),  # Iowa (Des Moines)
        "azure:northcentralus": (41.9, -87.6),  # Illinois (Chicago)
        "azure:southcentralus": (29.4, -98.5),  # Texas (San Antonio)
        "azure:westcentralus": (41.1, -104.8),  # Wyoming (Cheyenne)
        "azure:westus": (37.8, -122.4),  # California (San Francisco)
        "azure:westus2": (47.2, -119.9),  # Washington (Quincy)
        "azure:westus3": (33.4, -112.1),  # Arizona (Phoenix)
        "azure:canadacentral": (43.7, -79.4),  # Toronto
        "azure:canadaeast": (46.8, -71.2),  # Québec City
        "azure:mexicocentral": (20.6, -100.4),  # Querétaro
        "azure:brazilsouth": (-23.5, -46.6),  # São Paulo
        "azure:brazilsoutheast": (-22.9, -43.2),  # Rio de Janeiro
        "azure:chilecentral": (-33.4, -70.7),  # Santiago
        "azure:northeurope": (53.3, -6.3),  # Ireland (Dublin)
        "azure:westeurope": (52.4, 4.9),  # Netherlands (Amsterdam)
        "azure:uksouth": (51.5, -0.1),  # London
        "azure:ukwest": (51.5, -3.2),  # Cardiff
        "azure:francecentral": (48.9, 2.4),  # Paris
        "azure:francesouth": (43.3, 5.4),  # Marseille
        "azure:germanywestcentral": (50.1, 8.7),  # Frankfurt
        "azure:germanynorth": (52.5, 13.4),  # Berlin
        "azure:switzerlandnorth": (47.4, 8.5),  # Zurich
        "azure:switzerlandwest": (46.2, 6.1),  # Geneva
        "azure:norwayeast": (59.9, 10.8),  # Oslo
        "azure:norwaywest": (59.0, 5.7),  # Stavanger
        "azure:swedencentral": (60.7, 17.1),  # Gävle
        "azure:swedensouth": (55.6, 13.0),  # Malmö
        "azure:polandcentral": (52.2, 21.0),  # Warsaw
        "azure:italynorth": (45.5, 9.2),  # Milan
        "azure:spaincentral": (40.4, -3.7),  # Madrid
        "azure:israelcentral": (32.1, 34.8),  # Israel (Tel Aviv)
        "azure:uaenorth": (25.2, 55.3),  # Dubai
        "azure:uaecentral": (24.5, 54.4),  # Abu Dhabi
        "azure:qatarcentral": (25.3, 51.5),  # Doha
        "azure:southafricanorth": (-26.2, 28.0),  # Johannesburg
        "azure:southafricawest": (-33.9, 18.4),  # Cape Town
        "azure:centralindia": (18.5, 73.9),  # Pune
        "azure:southindia": (13.1, 80.3),  # Chennai
        "azure:westindia": (19.1, 72.9),  # Mumbai
        "azure:jioindiacentral": (21.1, 79.1),  # Nagpur
        "azure:jioindiawest": (22.5, 70.1),  # Jamnagar
        "azure:japaneast": (35.7, 139.7),  # Tokyo
        "azure:japanwest": (34.7, 135.5),  # Osaka
        "azure:koreacentral": (37.6, 127.0),  # Seoul
        "azure:koreasouth": (35.2, 129.1),  # Busan
        "azure:eastasia": (22.3, 114.2),  # Hong Kong
        "azure:southeastasia": (1.3, 103.8),  # Singapore
        "azure:indonesiacentral": (-6.2, 106.8),  # Jakarta
        "azure:malaysiawest": (3.1, 101.7),  # Kuala Lumpur
        "azure:australiaeast": (-33.9, 151.2),  # New South Wales (Sydney)
        "azure:australiasoutheast": (-37.8, 145.0),  # Victoria (Melbourne)
        "azure:australiacentral": (-35.3, 149.1),  # Canberra
        "azure:australiacentral2": (-35.3, 149.1),  # Canberra
        "azure:newzealandnorth": (-36.8, 174.8),  # Auckland
        # Google Cloud
        "gcp:us-central1": (41.3, -95.9),  # Council Bluffs, Iowa
        "gcp:us-east1": (33.2, -80.0),  # Moncks Corner, South Carolina
        "gcp:us-east4": (39.0, -77.5),  # Ashburn, Virginia
        "gcp:us-east5": (40.0, -83.0),  # Columbus, Ohio
        "gcp:us-south1": (32.8, -96.8),  # Dallas
        "gcp:us-west1": (45.6, -121.2),  # The Dalles, Oregon
        "gcp:us-west2": (34.1, -118.2),  # Los Angeles
        "gcp:us-west3": (40.8, -111.9),  # Salt Lake City
        "gcp:us-west4": (36.2, -115.1),  # Las Vegas
        "gcp:northamerica-northeast1": (45.5, -73.6),  # Montréal
        "gcp:northamerica-northeast2": (43.7, -79.4),  # Toronto
        "gcp:northamerica-south1": (20.6, -100.4),  # Querétaro
        "gcp:southamerica-east1": (-23.5, -46.8),  # Osasco (São Paulo)
        "gcp:southamerica-west1": (-33.4, -70.7),  # Santiago
        "gcp:europe-west1": (50.4, 3.8),  # St. Ghislain, Belgium
        "gcp:europe-west2": (51.5, -0.1),  # London
        "gcp:europe-west3": (50.1, 8.7),  # Frankfurt
        "gcp:europe-west4": (53.4, 6.8),  # Eemshaven, Netherlands
        "gcp:europe-west6": (47.4, 8.5),  # Zurich
        "gcp:europe-west8": (45.5, 9.2),  # Milan
        "gcp:europe-west9": (48.9, 2.4),  # Paris
        "gcp:europe-west10": (52.5, 13.4),  # Berlin
        "gcp:europe-west12": (45.1, 7.7),  # Turin
        "gcp:europe-north1": (60.6, 27.2),  # Hamina, Finland
        "gcp:europe-north2": (59.3, 18.1),  # Stockholm
        "gcp:europe-central2": (52.2, 21.0),  # Warsaw
        "gcp:europe-southwest1": (40.4, -3.7),  # Madrid
        "gcp:me-west1": (32.1, 34.8),  # Tel Aviv
        "gcp:me-central1": (25.3, 51.5),  # Doha
        "gcp:me-central2": (26.4, 50.1),  # Dammam, Saudi Arabia
        "gcp:africa-south1": (-26.2, 28.0),  # Johannesburg
        "gcp:asia-east1": (24.1, 120.5),  # Changhua County, Taiwan
        "gcp:asia-east2": (22.3, 114.2),  # Hong Kong
        "gcp:asia-northeast1": (35.7, 139.7),  # Tokyo
        "gcp:asia-northeast2": (34.7, 135.5),  # Osaka
        "gcp:asia-northeast3": (37.6, 127.0),  # Seoul
        "gcp:asia-south1": (19.1, 72.9),  # Mumbai
        "gcp:asia-south2": (28.6, 77.2),  # Delhi
        "gcp:asia-southeast1": (1.3, 103.7),  # Jurong West, Singapore
        "gcp:asia-southeast2": (-6.2, 106.8),  # Jakarta
        "gcp:australia-southeast1": (-33.9, 151.2),  # Sydney
        "gcp:australia-southeast2": (-37.8, 145.0),  # Melbourne
    }
)


def _bare_ids(regions: Mapping[str, Coordinates]) -> dict[str, Coordinates | None]:
    """Region ids without their provider; None marks an id two providers share."""
    found: dict[str, Coordinates | None] = {}
    for key, coordinates in regions.items():
        bare = key.partition(":")[2]
        found[bare] = None if bare in found else coordinates
    return found


_BARE_IDS: Mapping[str, Coordinates | None] = MappingProxyType(_bare_ids(REGIONS))


def region_coordinates(
    name: str, regions: Mapping[str, Coordinates] = REGIONS
) -> Coordinates | None:
    """(lat, lon) of a region, by `provider:id` or, when unambiguous, by bare id.

    Case and surrounding blanks are ignored. A bare id (``eu-west-1``) is found
    only when exactly one provider has it; an unknown name, or a bare id that
    more than one provider uses, gives None. ``regions`` defaults to the
    built-in table.
    """
    key = name.strip().lower()
    if ":" in key:
        return regions.get(key)
    bare_ids = _BARE_IDS if regions is REGIONS else _bare_ids(regions)
    return bare_ids.get(key)
