"""Walks the web console at /console/ in a real browser (Chromium over
WebDriver) against a running platform-server, checking what a person sees:
sign-in, browsing, create, edit, a stale edit, a refused delete, a role
binding, escaping of hostile names, CSRF refusal, a read-only viewer and
sign-out. Steps that need the API's side of things use its REST interface
with the admin token.

    python3 console_walk.py --base http://127.0.0.1:PORT --admin-token D/admin.token \
        --server-bin target/debug/platform-server --data-dir D \
        [--widgets http://127.0.0.1:PORT2] [--screenshots DIR]

Each check prints `ok: <what>`; the first failure raises (non-zero exit).
Chromium and chromedriver come from the system ($CHROMIUM, $CHROMEDRIVER,
default /usr/bin/chromium and /usr/bin/chromedriver): nothing is downloaded.
"""

import argparse
import http.client
import json
import os
import shutil
import subprocess
import sys
import tempfile
import urllib.parse
from html.parser import HTMLParser

# Selenium Manager must never fetch a browser or a driver.
os.environ.setdefault("SE_OFFLINE", "true")

from selenium import webdriver  # noqa: E402
from selenium.common.exceptions import (  # noqa: E402
    NoAlertPresentException,
    TimeoutException,
)
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support import expected_conditions as EC  # noqa: E402
from selenium.webdriver.support.ui import Select, WebDriverWait  # noqa: E402

# A bound on "the page answers at all", not a timing assertion.
TIMEOUT = 30
SESSION_COOKIE = "console_session"
XSS_NAME = "<script>alert(1)</script>"


class WalkFailure(Exception):
    pass


def ok(what):
    print(f"ok: {what}", flush=True)


def check(condition, message):
    if not condition:
        raise WalkFailure(message)


# --- plain HTTP (no redirects followed) -------------------------------------


def fetch(url, method="GET", headers=None, body=None):
    """One request, redirects not followed: (status, headers, body text)."""
    parts = urllib.parse.urlsplit(url)
    connection_type = (
        http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    )
    connection = connection_type(parts.hostname, parts.port, timeout=TIMEOUT)
    target = parts.path + (f"?{parts.query}" if parts.query else "")
    if isinstance(body, str):
        body = body.encode()
    try:
        connection.request(method, target, body=body, headers=headers or {})
        response = connection.getresponse()
        return response.status, response.headers, response.read().decode("utf-8", "replace")
    finally:
        connection.close()


class Api:
    """The REST API with a bearer token."""

    def __init__(self, base, token):
        self.base = base
        self.token = token

    def call(self, method, path, body=None, expect=(200,)):
        headers = {"Authorization": f"Bearer {self.token}", "Accept": "application/json"}
        data = None
        if body is not None:
            headers["Content-Type"] = "application/json"
            data = json.dumps(body)
        status, _, text = fetch(self.base + path, method, headers, data)
        check(
            status in expect,
            f"REST {method} {path}: expected {expect}, got {status}: {text[:500]}",
        )
        return status, (json.loads(text) if text.strip() else {})

    def get(self, path):
        return self.call("GET", path)[1]

    def create(self, collection, parent, body):
        return self.call("POST", f"/iam/v2/{collection}/{parent}", body)[1]

    def children(self, collection, parent):
        """Every item of `collection` directly under `parent`, all pages."""
        items, token = [], ""
        while True:
            query = {"uidp.children_of": parent, "pageSize": "200"}
            if token:
                query["pageToken"] = token
            page = self.get(f"/iam/v2/{collection}?{urllib.parse.urlencode(query)}")
            items += page.get("items", [])
            token = page.get("nextPageToken", "")
            if not token:
                return items


# --- raw HTML ----------------------------------------------------------------


class Html(HTMLParser):
    """The start tags of a page, each with the id of the form it is in, and
    the text of its `<h1 id="title">` (entities decoded)."""

    def __init__(self, text):
        super().__init__(convert_charrefs=True)
        self.tags = []
        self.title = ""
        self._form = None
        self._in_title = False
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        attributes = {name: value or "" for name, value in attrs}
        if tag == "form":
            self._form = attributes.get("id", "")
        if tag == "h1" and attributes.get("id") == "title":
            self._in_title = True
        self.tags.append((tag, attributes, self._form))

    def handle_endtag(self, tag):
        if tag == "form":
            self._form = None
        if tag == "h1":
            self._in_title = False

    def handle_data(self, data):
        if self._in_title:
            self.title += data

    def by_id(self, element_id):
        return next((a for _, a, _ in self.tags if a.get("id") == element_id), None)

    def error_classes(self):
        error = self.by_id("error")
        return error.get("class", "").split() if error is not None else None

    def csrf(self, form_id):
        for tag, attributes, form in self.tags:
            if tag == "input" and attributes.get("name") == "csrf" and form == form_id:
                return attributes.get("value", "")
        raise WalkFailure(f"no csrf input in form #{form_id}")


def cookie_header(cookie):
    return {"Cookie": f"{SESSION_COOKIE}={cookie}"}


def form_post(url, cookie, fields, origin):
    headers = {
        **cookie_header(cookie),
        "Content-Type": "application/x-www-form-urlencoded",
        "Origin": origin,
    }
    return fetch(url, "POST", headers, urllib.parse.urlencode(fields))


def location_path(headers):
    return urllib.parse.urlsplit(headers.get("Location", "")).path


# --- the browser -------------------------------------------------------------


def start_browser(profile):
    options = webdriver.ChromeOptions()
    options.binary_location = os.environ.get("CHROMIUM", "/usr/bin/chromium")
    for argument in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--window-size=1280,900",
        f"--user-data-dir={profile}",
    ):
        options.add_argument(argument)
    # An alert a page opens stays open, so the XSS check can see it.
    options.unhandled_prompt_behavior = "ignore"
    service = Service(executable_path=os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver"))
    return webdriver.Chrome(options=options, service=service)


class Walk:
    def __init__(self, args, driver):
        self.base = args.base.rstrip("/")
        self.origin = self.base
        self.args = args
        self.driver = driver
        with open(args.admin_token, encoding="utf-8") as file:
            self.admin_token = file.read().strip()
        self.api = Api(self.base, self.admin_token)

    # Paths and waits.

    def url(self, path):
        return self.base + path

    def item_path(self, collection, key):
        return f"/console/{collection}/item/{key}"

    def path(self):
        return urllib.parse.urlsplit(self.driver.current_url).path

    def wait(self, condition, what):
        try:
            return WebDriverWait(self.driver, TIMEOUT).until(condition)
        except TimeoutException:
            raise WalkFailure(f"{what}: not seen at {self.driver.current_url}\n{self.page_error()}")

    def page_error(self):
        errors = self.driver.find_elements(By.ID, "error")
        return f"#error: {errors[0].text}" if errors else ""

    def wait_path(self, path, what):
        self.wait(lambda d: self.path() == path, f"{what} (expected path {path})")

    def wait_path_prefix(self, prefix, what):
        self.wait(
            lambda d: self.path().startswith(prefix), f"{what} (expected a path under {prefix})"
        )
        return self.path()[len(prefix) :]

    def element(self, css, what=None):
        return self.wait(
            EC.presence_of_element_located((By.CSS_SELECTOR, css)), what or f"element {css}"
        )

    def click(self, css, what=None):
        self.wait(
            EC.element_to_be_clickable((By.CSS_SELECTOR, css)), what or f"clickable {css}"
        ).click()

    def fill(self, css, value):
        field = self.element(css)
        field.clear()
        if value:
            field.send_keys(value)

    def absent(self, css):
        return not self.driver.find_elements(By.CSS_SELECTOR, css)

    def error_classes(self):
        return self.element("#error", "the #error box").get_attribute("class").split()

    def field(self, name):
        return self.element(f'dd[data-field="{name}"]', f"field {name}").text.strip()

    def crumbs(self):
        """The paths the breadcrumbs link to."""
        return [
            urllib.parse.urlsplit(a.get_attribute("href")).path
            for a in self.driver.find_elements(By.CSS_SELECTOR, "nav#breadcrumbs a")
        ]

    def session_cookie(self):
        cookie = self.driver.get_cookie(SESSION_COOKIE)
        check(cookie is not None, f"no {SESSION_COOKIE} cookie in the browser")
        return cookie

    def screenshot(self, name):
        if self.args.screenshots:
            path = os.path.join(self.args.screenshots, name)
            check(self.driver.save_screenshot(path), f"could not save {path}")
            ok(f"screenshot {path}")

    # Shared steps.

    def sign_in(self, token):
        self.wait_path("/console/signin", "the sign-in page")
        self.fill('#signin textarea[name="token"]', token)
        self.click("#signin-submit")
        self.wait(lambda d: self.path() != "/console/signin", "leaving the sign-in page")

    def sign_out(self):
        self.click("#signout-submit")
        self.wait_path("/console/signin", "the sign-in page after signing out")

    def open_item(self, collection, key):
        self.driver.get(self.url(self.item_path(collection, key)))
        self.wait_path(self.item_path(collection, key), f"the item page of {key}")
        return self.element("#title", "the item's #title").text

    def save_form(self):
        self.element("#item-form", "the item form")
        self.click("#item-form #save")


# --- the steps ---------------------------------------------------------------


def find_root(walk):
    roots = [
        g
        for g in walk.api.get("/iam/v2/groups?pageSize=200").get("items", [])
        if "/" not in g["uid"]
    ]
    check(len(roots) == 1, f"expected one root organization at first start, REST lists {roots}")
    return roots[0]


def find_viewer_role(walk, root):
    roles = [r for r in walk.api.children("roles", root) if r.get("name") == "viewer"]
    check(len(roles) == 1, f"expected one built-in viewer role under {root}, found {roles}")
    return roles[0]["uid"]


def step_sign_in(walk):
    driver = walk.driver
    driver.get(walk.url("/console/"))
    walk.wait_path("/console/signin", "/console/ without a session leads to sign-in")
    ok("/console/ without a session lands on /console/signin")
    walk.fill('#signin textarea[name="token"]', "not-a-token")
    walk.click("#signin-submit")
    walk.element("#error", "the error of a bad token")
    walk.wait_path("/console/signin", "a bad token stays on sign-in")
    ok("a bad token is refused on the sign-in page")
    walk.sign_in(walk.admin_token)
    walk.wait_path("/console/", "home after sign-in")
    walk.element("ul.roots", "the home page's ul.roots")
    ok("signed in with the admin token: home page")


def step_headers(walk, root):
    cookie = walk.session_cookie()["value"]
    pages = [
        ("/console/signin", {}),
        ("/console/", cookie_header(cookie)),
    ]
    for path, headers in pages:
        status, response, _ = fetch(walk.url(path), headers=headers)
        check(status == 200, f"GET {path}: {status}")
        csp = response.get("Content-Security-Policy", "")
        directives = {d.split()[0]: d.split()[1:] for d in (p.strip() for p in csp.split(";")) if d}
        script = directives.get("script-src", directives.get("default-src", []))
        check(
            # 'self' or stricter ('none'): nothing loads from elsewhere by default.
            directives.get("default-src") in (["'self'"], ["'none'"]),
            f"{path}: CSP default-src is not 'self' (or stricter): {csp}",
        )
        check(
            directives.get("frame-ancestors") == ["'none'"],
            f"{path}: CSP without frame-ancestors 'none': {csp}",
        )
        check("'unsafe-inline'" not in script, f"{path}: CSP allows inline script: {csp}")
        check(
            response.get("X-Content-Type-Options") == "nosniff",
            f"{path}: no X-Content-Type-Options: nosniff",
        )
        check(
            response.get("Referrer-Policy") == "same-origin",
            f"{path}: Referrer-Policy is not same-origin",
        )
        check(
            "no-store" in response.get("Cache-Control", ""),
            f"{path}: Cache-Control without no-store",
        )
        ok(
            f"{path}: CSP (default-src 'self' or stricter, frame-ancestors 'none', no inline script), "
            "nosniff, same-origin referrer, no-store"
        )
    path = walk.item_path("groups", root)
    status, response, _ = fetch(walk.url(path))
    next_path = urllib.parse.parse_qs(
        urllib.parse.urlsplit(response.get("Location", "")).query
    ).get("next")
    check(
        status == 303 and location_path(response) == "/console/signin" and next_path == [path],
        f"GET {path} without a session: {status} to {response.get('Location')}",
    )
    ok(f"GET {path} without a session: 303 to /console/signin?next={path}")


def step_root(walk, root):
    driver = walk.driver
    driver.get(walk.url("/console/"))
    links = walk.wait(
        lambda d: d.find_elements(By.CSS_SELECTOR, "ul.roots a.item-link"), "ul.roots a.item-link"
    )
    wanted = walk.item_path("groups", root["uid"])
    link = next(
        (a for a in links if urllib.parse.urlsplit(a.get_attribute("href")).path == wanted), None
    )
    check(
        link is not None,
        f"no ul.roots link to {wanted}: {[a.get_attribute('href') for a in links]}",
    )
    check(link.text.strip() == (root.get("name") or root["uid"]), f"root link text {link.text!r}")
    link.click()
    walk.wait_path(wanted, "the root organization's item page")
    title = walk.element("#title").text
    check(
        title == (root.get("name") or root["uid"]),
        f"root #title {title!r}, REST name {root.get('name')!r}",
    )
    # A root has no ancestors: its breadcrumbs (if any) lead to no other item.
    strays = [c for c in walk.crumbs() if "/item/" in c and c != wanted]
    check(not strays, f"the root's breadcrumbs lead to items {strays}")
    check(walk.field("name") == root.get("name", ""), "root dd[data-field=name]")
    walk.element(
        '#children a.collection-link[data-collection="groups"]',
        "the root's child collection groups",
    )
    ok(f"root organization {title!r}: title, breadcrumbs, fields, child collections")
    walk.screenshot("console-organization.png")


def step_create_child(walk, root):
    walk.open_item("groups", root)
    walk.click('a.create-link[data-collection="groups"]', "the create link for groups")
    walk.wait_path("/console/groups/new", "the create form")
    walk.fill('#item-form [name="name"]', "walk-child")
    walk.fill('#item-form [name="description"]', "made in the browser")
    walk.save_form()
    child = walk.wait_path_prefix("/console/groups/item/", "the new group's item page")
    check(
        child.startswith(root + "/") and child.count("/") == 1,
        f"new group {child} is not a child of {root}",
    )
    check(walk.field("name") == "walk-child", "the new group's name on its page")
    check(walk.element("#title").text == "walk-child", "the new group's #title")
    crumbs = walk.crumbs()
    check(walk.item_path("groups", root) in crumbs, f"breadcrumbs {crumbs} do not lead to the root")
    check(
        walk.api.get(f"/iam/v2/groups/{child}")["name"] == "walk-child",
        "REST name of the new group",
    )
    ok(
        f"created child group {child} in the browser; its page shows it, breadcrumbs lead to the root"
    )
    return child


def step_edit(walk, child):
    walk.open_item("groups", child)
    walk.click("a#edit")
    walk.wait_path(f"/console/groups/edit/{child}", "the edit form")
    walk.fill('#item-form [name="description"]', "edited in the browser")
    walk.save_form()
    walk.wait_path(walk.item_path("groups", child), "the item page after saving")
    check(
        walk.field("description") == "edited in the browser", "the edited description on the page"
    )
    check(
        walk.api.get(f"/iam/v2/groups/{child}")["description"] == "edited in the browser",
        "REST description",
    )
    ok("edited the description in the browser; page and REST show it")


def step_stale_edit(walk, child):
    walk.open_item("groups", child)
    walk.click("a#edit")
    walk.wait_path(f"/console/groups/edit/{child}", "the edit form")
    walk.fill('#item-form [name="description"]', "from a stale form")
    walk.api.call(
        "PATCH",
        f"/iam/v2/groups/{child}?updateMask=description",
        {"description": "changed over REST"},
    )
    walk.save_form()
    classes = walk.error_classes()
    check("aborted" in classes, f"stale save: #error classes {classes}, expected aborted")
    walk.element("#item-form", "the form re-rendered after the refusal")
    group = walk.api.get(f"/iam/v2/groups/{child}")
    description = group["description"]
    check(
        description == "changed over REST", f"after a stale save the description is {description!r}"
    )
    title = walk.element("#title").text
    check(title == f"Edit {group['name']}", f"the refused form's title is {title!r}")
    created = walk.element('#item-form output[id="f-createTime"]', "createTime, read only").text
    check(created.strip() != "", "the refused form's read-only fields are blank")
    walk.screenshot("console-stale-edit.png")
    walk.click("a#reload", "the reload link")
    walk.wait_path(f"/console/groups/edit/{child}", "the reloaded edit form")
    shown = walk.element('#item-form [name="description"]').get_attribute("value")
    check(shown == "changed over REST", f"the reloaded form shows {shown!r}")
    ok(
        "a form opened before a REST change is refused (#error.aborted) under its title, read-only "
        "fields kept; Reload shows the server's values; the REST value stays"
    )


def step_delete_refused(walk, child):
    grandchild = walk.api.create("groups", child, {"name": "walk-grandchild"})["uid"]
    walk.open_item("groups", child)
    walk.click("a#delete")
    walk.wait_path(f"/console/groups/delete/{child}", "the delete page")
    walk.element("#delete-form", "the delete form")
    walk.click("#confirm-delete")
    classes = walk.error_classes()
    check("failed_precondition" in classes, f"delete refusal: #error classes {classes}")
    reasons = walk.driver.find_elements(By.CSS_SELECTOR, "#error ul.preconditions li")
    check(reasons and all(r.text.strip() for r in reasons), "no ul.preconditions li saying why")
    walk.screenshot("console-delete-refused.png")
    walk.api.call("GET", f"/iam/v2/groups/{child}")
    walk.api.call("GET", f"/iam/v2/groups/{grandchild}")
    ok(
        f"deleting a group with a child is refused (#error.failed_precondition: {reasons[0].text.strip()!r}); "
        "both still exist"
    )


# Colours as the browser computed them: `rgb(r, g, b)` to WCAG contrast.
COLOURS = """
const colour = (element, property) => getComputedStyle(element)[property];
const link = document.querySelector('main a:not(.button)');
const danger = document.querySelector('.button.danger');
const button = document.querySelector('.button:not(.danger), button');
return {
  page: colour(document.body, 'backgroundColor'),
  text: colour(document.body, 'color'),
  link: link && colour(link, 'color'),
  danger: danger && [colour(danger, 'color'), colour(danger, 'backgroundColor')],
  button: button && [colour(button, 'color'), colour(button, 'backgroundColor')],
};
"""


def luminance(rgb):
    channels = [int(c) / 255 for c in rgb[rgb.index("(") + 1 : rgb.index(")")].split(",")[:3]]
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(a, b):
    a, b = luminance(a), luminance(b)
    return (max(a, b) + 0.05) / (min(a, b) + 0.05)


def step_contrast(walk, child):
    """Text, links, the danger button and the buttons read at 4.5:1 or more
    in the light and the dark scheme, on an item page and on /docs."""
    driver = walk.driver
    pages = {}
    for scheme in ("light", "dark"):
        driver.execute_cdp_cmd(
            "Emulation.setEmulatedMedia",
            {"features": [{"name": "prefers-color-scheme", "value": scheme}]},
        )
        walk.open_item("groups", child)
        item = driver.execute_script(COLOURS)
        check(item["danger"] and item["button"] and item["link"], f"{scheme}: {item}")
        pairs = {
            "text": (item["text"], item["page"]),
            "link": (item["link"], item["page"]),
            "danger button": tuple(item["danger"]),
            "button": tuple(item["button"]),
        }
        driver.get(walk.url("/docs"))
        reference = driver.execute_script(COLOURS)
        pairs["reference link"] = (reference["link"], reference["page"])
        for what, (foreground, background) in pairs.items():
            # A transparent background shows the page's.
            if background.replace(" ", "") == "rgba(0,0,0,0)":
                background = item["page"]
            ratio = contrast(foreground, background)
            check(ratio >= 4.5, f"{scheme}: {what} {foreground} on {background} is {ratio:.2f}:1")
        pages[scheme] = item["page"]
        if scheme == "dark":
            walk.open_item("groups", child)
            walk.screenshot("console-dark.png")
    check(pages["light"] != pages["dark"], f"one page colour for both schemes: {pages}")
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})
    ok("text, links, danger and buttons reach 4.5:1 in the light and the dark scheme (console and /docs)")


def step_local_identity(walk, root):
    """An identity with no sign-in claim, made with the form (the claim is
    optional: the browser must not block the save)."""
    walk.open_item("groups", root)
    walk.click('a.create-link[data-collection="identities"]', "the create link for identities")
    walk.wait_path("/console/identities/new", "the identity form")
    walk.fill('#item-form [name="name"]', "walker")
    walk.save_form()
    walker = walk.wait_path_prefix("/console/identities/item/", "the new identity's item page")
    check(walk.element("#title").text == "walker", "the new identity's #title")
    stored = walk.api.get(f"/iam/v2/identities/{walker}")
    check(stored.get("name") == "walker" and not stored.get("claimMatch"), f"REST identity {stored}")
    ok(f"created identity {walker} with no claim in the browser; REST has no claimMatch")
    return walker


def step_role_binding(walk, root, child, viewer_role):
    walker = step_local_identity(walk, root)
    walk.open_item("groups", child)
    walk.click('a.create-link[data-collection="roleBindings"]', "the create link for role bindings")
    walk.wait_path("/console/roleBindings/new", "the role binding form")
    choose(walk, "role", viewer_role, "viewer")
    choose(walk, "identity", walker, "walker")
    walk.screenshot("console-role-binding.png")
    walk.save_form()
    binding = walk.wait_path_prefix("/console/roleBindings/item/", "the new binding's item page")
    check(binding.startswith(child + "/"), f"binding {binding} is not under {child}")
    walk.element("#title", "the binding's #title")
    crumbs = walk.crumbs()
    for ancestor in (root, child):
        path = walk.item_path("groups", ancestor)
        check(path in crumbs, f"the binding's breadcrumbs {crumbs} lack {path}")
    stored = walk.api.get(f"/iam/v2/roleBindings/{binding}")
    check(
        stored.get("role") == viewer_role and stored.get("identity") == walker,
        f"REST binding {stored}",
    )
    ok(f"bound viewer to walker at the child group in the browser ({binding}); REST agrees")
    return walker, binding


def step_access(walk, child, walker, binding):
    """The child group's Access section names the binding by identity and
    role, and walker's own page lists the binding with its group and role."""
    walk.open_item("groups", child)
    holders = walk.driver.find_elements(By.CSS_SELECTOR, "#holders tr.holder")
    rows = [
        (
            row.find_element(By.CSS_SELECTOR, "a.member").text,
            [a.text for a in row.find_elements(By.CSS_SELECTOR, "a.role")],
            [a.get_attribute("href") for a in row.find_elements(By.CSS_SELECTOR, "a.binding")],
        )
        for row in holders
    ]
    found = [r for r in rows if r[0] == "walker"]
    check(found and "viewer" in found[0][1], f"the Access table lacks walker as viewer: {rows}")
    check(
        any(href.endswith(walk.item_path("roleBindings", binding)) for href in found[0][2]),
        f"walker's row does not lead to {binding}: {rows}",
    )
    walk.screenshot("console-access.png")
    walk.click("#holders a.member", "walker's link in the Access table")
    walk.wait_path(walk.item_path("identities", walker), "walker's page")
    own = walk.element(
        'section.related[data-collection="roleBindings"][data-field="identity"]',
        "walker's own bindings",
    )
    cells = [td.text for td in own.find_elements(By.CSS_SELECTOR, "tbody td")]
    check("viewer" in cells, f"walker's bindings do not name the role viewer: {cells}")
    header = walk.element("#who", "the header's signed-in identity").text
    check(header.startswith("Signed in as"), f"the header says {header!r}")
    ok("the group's Access table shows walker as viewer by name; walker's page lists the binding")


def choose(walk, name, value, text):
    select = Select(walk.element(f'#item-form select[name="{name}"]', f"select {name}"))
    options = [o for o in select.options if o.get_attribute("value") == value]
    check(
        options,
        f"select {name} has no option {value}: {[o.get_attribute('value') for o in select.options]}",
    )
    check(
        text in options[0].text,
        f"select {name}: option {value} reads {options[0].text!r}, expected {text!r}",
    )
    select.select_by_value(value)


def step_xss(walk, root):
    hostile = walk.api.create("groups", root, {"name": XSS_NAME})["uid"]
    driver = walk.driver
    driver.get(walk.url(walk.item_path("groups", hostile)))
    try:
        alert = driver.switch_to.alert
        text = alert.text
        alert.dismiss()
        raise WalkFailure(f"a hostile group name ran script (alert {text!r})")
    except NoAlertPresentException:
        pass
    walk.wait_path(walk.item_path("groups", hostile), "the hostile group's page")
    title = walk.element("#title").text
    check(title == XSS_NAME, f"#title reads {title!r}, expected the name literally")
    check("&lt;script&gt;" in driver.page_source, "page source lacks &lt;script&gt;")
    scripts = [
        s
        for s in driver.find_elements(By.TAG_NAME, "script")
        if "alert" in (s.get_attribute("textContent") or "")
    ]
    check(not scripts, "the hostile name became a script element")
    cookie = walk.session_cookie()["value"]
    status, _, raw = fetch(
        walk.url(walk.item_path("groups", hostile)), headers=cookie_header(cookie)
    )
    # The served bytes: the name escaped (`&lt;` or `&#60;`: any spelling of
    # the entities), never a tag, and it reads back literally.
    check(status == 200, f"GET the hostile group's page over HTTP: {status}")
    around = [raw[max(0, m - 40) : m + 60] for m in find_all(raw, "alert(1)")]
    check(
        "<script>alert" not in raw,
        f"served HTML does not escape the name: {around}",
    )
    check(Html(raw).title.strip() == XSS_NAME, f"served #title reads {Html(raw).title!r}")
    ok("a group named <script>alert(1)</script> shows literally, escaped in the HTML, no alert")


def find_all(text, needle):
    """The offsets of every occurrence of `needle` in `text`."""
    found, at = [], text.find(needle)
    while at != -1:
        found.append(at)
        at = text.find(needle, at + 1)
    return found


def group_named(walk, root, name):
    return [g for g in walk.api.children("groups", root) if g.get("name") == name]


def step_csrf(walk, root):
    cookie = walk.session_cookie()
    check(cookie.get("httpOnly") is True, f"session cookie not HttpOnly: {cookie}")
    check(cookie.get("sameSite") == "Strict", f"session cookie not SameSite=Strict: {cookie}")
    ok("session cookie is HttpOnly and SameSite=Strict")
    url = walk.url(f"/console/groups/new?parent={root}")
    status, _, body = form_post(url, cookie["value"], {"name": "x"}, "http://evil.example")
    check(status == 403, f"cross-site POST without csrf: {status}")
    check(Html(body).error_classes() is not None, "cross-site POST: no #error in the answer")
    status, _, body = form_post(url, cookie["value"], {"name": "x"}, walk.origin)
    classes = Html(body).error_classes()
    check(
        status == 403 and classes is not None and "csrf" in classes,
        f"POST without csrf: {status} {classes}",
    )
    check(not group_named(walk, root, "x"), "a POST without csrf created group x")
    ok("POST without csrf (cross-site or not) is 403 (#error.csrf) and creates nothing")
    # The same form with its csrf value goes through: the refusals above were the csrf's.
    _, _, page = fetch(
        walk.url(f"/console/groups/new?parent={root}"), headers=cookie_header(cookie["value"])
    )
    token = Html(page).csrf("item-form")
    status, headers, body = form_post(
        url, cookie["value"], {"csrf": token, "name": "walk-form-post"}, walk.origin
    )
    check(
        status == 303 and location_path(headers).startswith("/console/groups/item/"),
        f"POST with csrf: {status} {headers.get('Location')} {body[:300]}",
    )
    check(group_named(walk, root, "walk-form-post"), "a POST with csrf did not create its group")
    ok("the same POST with its csrf value creates the group (303 to its page)")


def mint_token(walk, identity):
    command = [
        walk.args.server_bin,
        "--data-dir",
        walk.args.data_dir,
        "--base-url",
        walk.base,
        "mint-token",
        "--identity",
        identity,
    ]
    result = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT)
    check(result.returncode == 0 and result.stdout.strip(), f"mint-token failed: {result.stderr}")
    return result.stdout.strip()


def step_viewer(walk, root, child, viewer_role):
    person = walk.api.create(
        "identities",
        root,
        {
            "name": "viewer-person",
            "claimMatch": {"issuer": "https://issuer.example", "subject": "viewer-person"},
        },
    )["uid"]
    walk.api.create("roleBindings", root, {"role": viewer_role, "identity": person})
    token = mint_token(walk, person)
    admin_cookie = walk.session_cookie()["value"]
    walk.sign_out()
    status, headers, _ = fetch(walk.url("/console/"), headers=cookie_header(admin_cookie))
    check(
        status == 303 and location_path(headers) == "/console/signin",
        f"old admin session: {status}",
    )
    root_page = walk.item_path("groups", root)
    walk.driver.get(walk.url(root_page))
    walk.wait_path("/console/signin", "pages closed after signing out")
    ok("signed out: pages redirect to sign-in, the old session cookie opens nothing")
    walk.sign_in(token)
    walk.wait_path(root_page, "sign-in returns to the page asked for (next)")
    walk.element("#title", "the root's #title for a viewer")
    assert_read_only(walk, "the root's page")
    walk.driver.get(walk.url(f"/console/groups?parent={root}"))
    walk.element("table#items", "the groups list")
    links = [
        urllib.parse.urlsplit(a.get_attribute("href")).path
        for a in walk.driver.find_elements(By.CSS_SELECTOR, "table#items a.item-link")
    ]
    check(
        walk.item_path("groups", child) in links, f"the viewer's groups list lacks {child}: {links}"
    )
    assert_read_only(walk, "the groups list")
    ok("a viewer sees the root and its groups with no edit, delete or create controls")
    viewer_post(walk, root)


def assert_read_only(walk, where):
    for css in ("a#edit", "a#delete", "a#create", "a.create-link"):
        check(walk.absent(css), f"{where} offers {css} to a viewer")


def viewer_post(walk, root):
    cookie = walk.session_cookie()["value"]
    _, _, page = fetch(walk.url(walk.item_path("groups", root)), headers=cookie_header(cookie))
    token = Html(page).csrf("signout")
    url = walk.url(f"/console/groups/new?parent={root}")
    status, _, body = form_post(url, cookie, {"csrf": token, "name": "y"}, walk.origin)
    classes = Html(body).error_classes()
    check(
        status == 403 and classes is not None and "permission_denied" in classes,
        f"a viewer's create POST: {status} {classes}",
    )
    check(not group_named(walk, root, "y"), "a viewer's POST created group y")
    ok(
        "a viewer's create POST with a valid csrf is 403 (#error.permission_denied) and creates nothing"
    )


def step_sign_out(walk):
    cookie = walk.session_cookie()["value"]
    walk.sign_out()
    walk.driver.get(walk.url("/console/"))
    walk.wait_path("/console/signin", "/console/ after signing out")
    status, headers, _ = fetch(walk.url("/console/"), headers=cookie_header(cookie))
    check(
        status == 303 and location_path(headers) == "/console/signin",
        f"the signed-out cookie still opens /console/: {status} {headers.get('Location')}",
    )
    ok("signed out: /console/ leads to sign-in, the old cookie is dead (303)")


def step_widgets(walk, widgets):
    driver = walk.driver
    driver.delete_all_cookies()
    driver.get(widgets.rstrip("/") + "/console/")
    walk.wait(lambda d: walk.path() in ("/console/", "/console/signin"), "the widgets console")
    if walk.path() == "/console/signin":
        walk.sign_in("")
        walk.wait_path("/console/", "the widgets home page")
    walk.element(
        '#collections a.collection-link[data-collection="widgets"]', "the widgets collection link"
    )
    ok("the widgets example's console lists its widgets collection")


def walk_all(walk):
    root_group = find_root(walk)
    root = root_group["uid"]
    viewer_role = find_viewer_role(walk, root)
    step_sign_in(walk)
    step_headers(walk, root)
    step_root(walk, root_group)
    child = step_create_child(walk, root)
    step_edit(walk, child)
    step_stale_edit(walk, child)
    step_delete_refused(walk, child)
    step_contrast(walk, child)
    walker, binding = step_role_binding(walk, root, child, viewer_role)
    step_access(walk, child, walker, binding)
    step_xss(walk, root)
    step_csrf(walk, root)
    step_viewer(walk, root, child, viewer_role)
    step_sign_out(walk)
    if walk.args.widgets:
        step_widgets(walk, walk.args.widgets)


def report_failure(driver, screenshots, failure):
    """Says where the walk stopped and keeps a picture of it, if it can."""
    try:
        where = driver.current_url
        if screenshots:
            driver.save_screenshot(os.path.join(screenshots, "console-failure.png"))
    except Exception as browser_error:  # the browser itself may be what failed
        where = f"(browser unreachable: {browser_error})"
    print(f"FAILED at {where}: {failure}", file=sys.stderr)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--base", required=True, help="the API's base URL, e.g. http://127.0.0.1:8080"
    )
    parser.add_argument("--admin-token", required=True, help="the server's admin.token file")
    parser.add_argument(
        "--server-bin", required=True, help="the platform-server binary (for mint-token)"
    )
    parser.add_argument("--data-dir", required=True, help="the server's data dir (for mint-token)")
    parser.add_argument("--widgets", help="base URL of a running widgets example")
    parser.add_argument("--screenshots", help="directory for PNG screenshots")
    args = parser.parse_args()
    if args.screenshots:
        os.makedirs(args.screenshots, exist_ok=True)
    profile = tempfile.mkdtemp(prefix="console-walk-")
    driver = start_browser(profile)
    try:
        walk_all(Walk(args, driver))
    except Exception as failure:
        report_failure(driver, args.screenshots, failure)
        if not isinstance(failure, WalkFailure):
            raise
        return 1
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)
    print("ok: the console walk passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
