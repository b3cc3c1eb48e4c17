"""Azure Traffic Manager profiles as tmdns documents. Re-exports only, no logic."""

from app.azure.convert import from_azure
from app.azure.errors import AzureError
from app.azure.naming import profile_name

__all__ = ["AzureError", "from_azure", "profile_name"]
