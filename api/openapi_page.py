"""The API's own documentation at `/schema`, readable without the internet.

litestar's default renderers load their scripts, styles and favicon from CDNs, which leaves a
blank page in a back office with no way out. Here `/schema` (and `/schema/swagger`) is Swagger
UI whose three files are vendored, unmodified, from the npm package `swagger-ui-dist` under
`api/static/swagger/` (Apache-2.0: its LICENSE and NOTICE beside them; the version and why it
is vendored in docs/api.md) and served by the app at `/static/swagger/`. `/schema/openapi.json`
is the document itself.
"""

from __future__ import annotations

from litestar.openapi import OpenAPIConfig
from litestar.openapi.plugins import JsonRenderPlugin, SwaggerRenderPlugin
from litestar.openapi.spec import Components, SecurityScheme

ASSETS = "/static/swagger"
SWAGGER_UI_VERSION = "5.35.0"
"""The version of `swagger-ui-dist` whose files are in `api/static/swagger/`."""


def openapi_config() -> OpenAPIConfig:
    """The OpenAPI document at `/schema/openapi.json`, rendered at `/schema` from local files."""
    swagger = SwaggerRenderPlugin(
        path=["/", "/swagger"], js_url=f"{ASSETS}/swagger-ui-bundle.js",
        css_url=f"{ASSETS}/swagger-ui.css",
        standalone_preset_js_url=f"{ASSETS}/swagger-ui-standalone-preset.js",
        favicon=f"<link rel='icon' type='image/png' href='{ASSETS}/favicon-32x32.png'>")
    return OpenAPIConfig(
        title="Sabot", version="0.1.0", path="/schema",
        render_plugins=[swagger, JsonRenderPlugin()],
        components=Components(security_schemes={"bearer": SecurityScheme(
            type="http", scheme="bearer",
            description="a token from `sabot token create`; none: anonymous")}))
