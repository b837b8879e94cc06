// What every page of the board shares: the token, kept in the tab's
// session storage and sent as a Bearer header (never a cookie), and the
// calls to /api/v1. Each page's script comes after this one.
"use strict";

const tokenKey = "taskd-token";

function headers() {
  const token = sessionStorage.getItem(tokenKey);
  return token ? { Authorization: "Bearer " + token } : {};
}

async function errorOf(response) {
  if (response.status === 401) {
    document.getElementById("token").focus();
    return new Error("this needs the token");
  }
  const body = await response.json().catch(() => ({}));
  return new Error(body.error || response.statusText);
}

async function getJson(path) {
  const response = await fetch(path, { headers: headers() });
  if (!response.ok) throw await errorOf(response);
  return response.json();
}

async function postJson(path) {
  const response = await fetch(path, { method: "POST", headers: headers() });
  if (!response.ok) throw await errorOf(response);
  return response.json();
}

// The page's `load` runs again once the token is given.
function keepToken(load) {
  const form = document.getElementById("token-form");
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    sessionStorage.setItem(tokenKey, document.getElementById("token").value);
    load();
  });
}
