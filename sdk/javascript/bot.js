#!/usr/bin/env node
// A minimal uno-arena bot in JavaScript: it loads the .proto files at run time
// (no generated code), connects to a match server, answers every decision with
// a legal action, reconnects when the connection drops, and on Ctrl-C finishes
// its running matches before it exits. docs/protocol.md ("Implementing a bot
// without the SDK") is the contract this file follows.
"use strict";

const fs = require("node:fs");
const net = require("node:net");
const path = require("node:path");
const { parseArgs } = require("node:util");
const grpc = require("@grpc/grpc-js");
const protoLoader = require("@grpc/proto-loader");
const { version } = require("./package.json");

const USAGE = `usage: node bot.js --name NAME [--token TOKEN] [--server HOST:PORT]
                   [--tls | --tls-ca FILE] [--tls-client-cert FILE --tls-client-key FILE]
                   [--insecure] [--proto-dir DIR] [--max-matches N]
  --server           the match server (default 127.0.0.1:50051)
  --name             the registered bot name (uno-arena bot register NAME)
  --token            its token (default: $UNO_ARENA_BOT_TOKEN)
  --tls              connect with TLS, trusting Node.js's CA roots (a public CA)
  --tls-ca           connect with TLS, trusting this CA (PEM): a private CA
                     (default: $UNO_ARENA_TLS_CA)
  --tls-client-cert  this bot's certificate (PEM), for a server that requires one
  --tls-client-key   its private key (PEM)
  --insecure         allow plaintext to a server off this machine (the token crosses
                     the network in clear); loopback needs no TLS
  --proto-dir        the folder holding uno_arena/v1/*.proto (default: $UNO_ARENA_PROTO,
                     else ../../proto from this file, i.e. the repository's proto/)
  --max-matches      matches played at once on the connection (default 4)`;

// ---- options -------------------------------------------------------------

function fail(message, code = 2) {
  console.error(`error: ${message}`);
  process.exit(code);
}

function readOptions() {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        server: { type: "string", default: "127.0.0.1:50051" },
        name: { type: "string" },
        token: { type: "string", default: process.env.UNO_ARENA_BOT_TOKEN },
        "proto-dir": {
          type: "string",
          default: process.env.UNO_ARENA_PROTO || path.join(__dirname, "..", "..", "proto"),
        },
        "max-matches": { type: "string", default: "4" },
        tls: { type: "boolean", default: false },
        "tls-ca": { type: "string", default: process.env.UNO_ARENA_TLS_CA || undefined },
        "tls-client-cert": { type: "string" },
        "tls-client-key": { type: "string" },
        insecure: { type: "boolean", default: false },
        help: { type: "boolean", short: "h" },
      },
    }));
  } catch (error) {
    fail(`${error.message}\n${USAGE}`);
  }
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  if (!values.name) fail(`--name is required\n${USAGE}`);
  if (!values.token) {
    fail("no token: pass --token or set UNO_ARENA_BOT_TOKEN (`uno-arena bot register NAME` prints it)");
  }
  const maxMatches = Number(values["max-matches"]);
  if (!Number.isInteger(maxMatches) || maxMatches < 1) {
    fail(`--max-matches must be a whole number of at least 1, got "${values["max-matches"]}"`);
  }
  const protoDir = path.resolve(values["proto-dir"]);
  if (!fs.existsSync(path.join(protoDir, "uno_arena", "v1", "bot.proto"))) {
    fail(`no uno_arena/v1/bot.proto under ${protoDir}: pass --proto-dir or set UNO_ARENA_PROTO`);
  }
  const credentials = channelCredentials(values);
  const { server, name, token } = values;
  return { server, name, token, protoDir, maxMatches, credentials };
}

// ---- how to reach the server: TLS, or plaintext on this machine only -------

// Whether HOST:PORT ([v6]:PORT) stays on this machine: 127.0.0.0/8, ::1 or localhost. Other
// names are not resolved: a name is off the machine unless it is localhost.
const LOOPBACK = new net.BlockList();
LOOPBACK.addSubnet("127.0.0.0", 8, "ipv4");
LOOPBACK.addAddress("::1", "ipv6");

function isLoopback(server) {
  let host = server;
  if (server.startsWith("[")) host = server.slice(1, server.indexOf("]"));
  else if ((server.match(/:/g) || []).length === 1) host = server.slice(0, server.lastIndexOf(":"));
  if (host.toLowerCase() === "localhost") return true;
  const family = net.isIP(host);
  return family !== 0 && LOOPBACK.check(host, family === 4 ? "ipv4" : "ipv6");
}

function readPem(file, option) {
  try {
    return fs.readFileSync(file);
  } catch (error) {
    return fail(`cannot read ${option} ${file}: ${error.message}`);
  }
}

// TLS (Node.js's roots, or the CA given) or plaintext; the token is never sent in clear to an
// address off this machine unless --insecure says so (before any connection is made).
function channelCredentials(values) {
  const ca = values["tls-ca"];
  const cert = values["tls-client-cert"];
  const key = values["tls-client-key"];
  if (Boolean(cert) !== Boolean(key)) {
    fail("a client certificate needs its key: give both --tls-client-cert and --tls-client-key");
  }
  if (values.tls || ca || cert) {
    return grpc.credentials.createSsl(
      ca ? readPem(ca, "--tls-ca") : null,
      key ? readPem(key, "--tls-client-key") : null,
      cert ? readPem(cert, "--tls-client-cert") : null,
    );
  }
  if (!values.insecure && !isLoopback(values.server)) {
    fail(`refusing to send the token in clear to ${values.server}, which is not on this machine: ` +
         "connect with TLS (--tls, or --tls-ca FILE / UNO_ARENA_TLS_CA for a private CA), or pass " +
         "--insecure if the network between is private", 1);
  }
  return grpc.credentials.createInsecure();
}

// ---- the protocol, loaded from the .proto files ----------------------------

function loadBotService(protoDir) {
  const definition = protoLoader.loadSync("uno_arena/v1/bot.proto", {
    includeDirs: [protoDir], // bot.proto imports "uno_arena/v1/game.proto" from here
    keepCase: true, // field names as written in the .proto: request_id, legal_actions ...
    enums: String, // enum values as their names: "ACTION_KIND_PLAY", "COLOUR_RED" ...
    defaults: true, // unset scalars and repeated fields read as 0, "", false, []
    oneofs: true, // message.kind names which field of a oneof is set
  });
  return grpc.loadPackageDefinition(definition).uno_arena.v1.BotService;
}

// ---- the strategy: change `choose` to make the bot play better -------------

const isWild = (card) => card.rank === "RANK_WILD" || card.rank === "RANK_WILD_DRAW_FOUR";
const points = (card) => (isWild(card) ? 50 : card.rank.match(/^RANK_\d$/) ? Number(card.rank.slice(5)) : 20);

// The colour we hold most of (ignoring Wilds), ties to the first in COLOUR order.
function colourHeldMost(cards) {
  const counts = { COLOUR_RED: 0, COLOUR_YELLOW: 0, COLOUR_GREEN: 0, COLOUR_BLUE: 0 };
  for (const card of cards) if (card.colour in counts) counts[card.colour] += 1;
  return Object.keys(counts).reduce((best, colour) => (counts[colour] > counts[best] ? colour : best));
}

// Pick one of request.legal_actions. Every legal action is in that list, so a
// bot that only ever answers from it never makes an illegal move.
function choose(request) {
  const legal = request.legal_actions;
  const hand = request.observation.cards;
  const ofKind = (kind) => legal.filter((action) => action.kind === `ACTION_KIND_${kind}`);
  const [catchIt] = ofKind("CATCH"); // someone did not call UNO: make them draw
  if (catchIt) return catchIt;
  const colourChoices = ofKind("CHOOSE_COLOUR"); // a Wild turned up as the first card
  if (colourChoices.length) {
    return colourChoices.find((a) => a.colour === colourHeldMost(hand)) || colourChoices[0];
  }
  // call UNO: of a card's two plays keep the calling one (with the seven_zero house rule every 7
  // and 0 comes with the call, so keeping only calling plays would keep only the 7s and 0s)
  const allPlays = ofKind("PLAY");
  const sameCard = (a, b) => a.card.index === b.card.index && a.colour === b.colour;
  const calledToo = (action) => allPlays.some((other) => other.uno && sameCard(action, other));
  const plays = allPlays.filter((action) => action.uno || !calledToo(action));
  const swaps = ofKind("SWAP"); // seven_zero: you played a 7; take the smallest hand
  if (swaps.length) {
    const sizes = request.observation.hand_sizes;
    return swaps.reduce((best, action) => (sizes[action.seat] < sizes[best.seat] ? action : best));
  }
  const coloured = plays.filter((action) => !isWild(action.card));
  if (coloured.length) {
    // shed the card worth the most points to the opponents, should they win the hand
    return coloured.reduce((best, action) => (points(action.card) > points(best.card) ? action : best));
  }
  if (plays.length) {
    // only Wilds play: a plain Wild before a Wild Draw Four, naming the colour held most
    const wild = plays.find((a) => a.card.rank === "RANK_WILD") ? "RANK_WILD" : "RANK_WILD_DRAW_FOUR";
    const colour = colourHeldMost(hand.filter((card) => !isWild(card)));
    return plays.find((a) => a.card.rank === wild && a.colour === colour) || plays[0];
  }
  // the safe default: draw on a turn, keep after drawing, accept a Wild Draw Four, let an UNO go
  // (or a jump-in), lay no more cards
  const safe = ["DRAW", "KEEP", "ACCEPT", "PASS", "DONE"].flatMap(ofKind);
  return safe[0] || legal[0];
}

// ---- one connection ---------------------------------------------------------

const log = (line) => console.log(`${new Date().toISOString()} ${line}`);
// "1 running match", "2 running matches"
const plural = (count) => `${count} running match${count === 1 ? "" : "es"}`;
const options = readOptions();
const BotService = loadBotService(options.protoDir);
const running = new Map(); // match_id -> the MatchStarted of each match this bot is in
let call = null; // the live stream, if any
let draining = false; // set by the first Ctrl-C

// Plays on one stream until it ends; resolves with its final status
// ({code, details, reason}) and whether the server welcomed us first.
function connectOnce(client) {
  return new Promise((resolve) => {
    let welcomed = false;
    call = client.Connect();
    call.write({
      hello: {
        bot_name: options.name,
        token: options.token,
        max_matches: options.maxMatches,
        client: `uno-arena-starter-js/${version} (node ${process.version})`,
      },
    });
    if (draining) call.write({ drain: { reason: "stopping (reconnected to finish its matches)" } });

    call.on("data", (message) => {
      const body = message[message.kind];
      switch (message.kind) {
        case "welcome":
          welcomed = true;
          running.clear(); // the server sends MatchStarted again for each match still running
          log(`connected to ${options.server} (${body.server}) as ${options.name}, ` +
              `${body.max_matches} matches at once`);
          break;
        case "match_started":
          running.set(body.match_id, body);
          log(`match ${body.match_id} started: seat ${body.seat} of ${body.bots.join(", ")}, ` +
              `to ${body.rules.target_score}`);
          break;
        case "decision_request":
          call.write({ decision: { request_id: body.request_id, action_id: choose(body).id } });
          break;
        case "events": // this bot decides from each request's observation alone, so ignores events
        case "hand_result":
        case "pong":
          break;
        case "fault":
          log(`fault in match ${body.match_id}: ${body.kind} ${body.detail} (strikes ${body.strikes})`);
          break;
        case "match_finished": {
          const result = body.result;
          const started = running.get(result.match_id);
          running.delete(result.match_id);
          const winners = result.winners.map((seat) => result.bots[seat]).join(", ");
          const seat = started ? started.seat : -1;
          log(`match ${result.match_id} finished: ${result.reason}, won by ${winners}, ` +
              `totals ${result.totals.join("-")}, our faults ${result.faults[seat] ?? 0}`);
          break;
        }
        case "draining":
          log(`the server starts no new match; ${body.running_matches} still running`);
          break;
        default:
          log(`ignoring an unknown message: ${message.kind}`); // a newer server; harmless
      }
    });
    call.on("error", () => {}); // every end, error or not, arrives as "status" below
    call.on("status", (status) => {
      call.end();
      call = null;
      // why the server ended the stream: a CloseReason's name (bot.proto) beside the status, in the
      // trailing metadata; "" if none (gRPC ended it by itself, or a server older than the reason)
      const [reason = ""] = status.metadata ? status.metadata.get("uno-arena-close-reason") : [];
      resolve({ code: status.code, details: status.details, reason: String(reason), welcomed });
    });
  });
}

// ---- reconnecting, stopping ------------------------------------------------

const sleep = (seconds) => new Promise((resolve) => setTimeout(resolve, seconds * 1000));

// Why the server ended a stream, when connecting again cannot help (bot.proto, CloseReason). The
// reason is what to read: the status message is for people and may change.
const REPLACED = `another copy of bot ${options.name} connected; this one stops`;
const REFUSED = "the server refused the bot's name or token";
const FIX_CLIENT = "the server refused this client's message (fix the client)";
const FINAL = {
  CLOSE_REASON_REPLACED: REPLACED,
  CLOSE_REASON_TOKEN_REVOKED: "the bot's token was replaced or revoked",
  CLOSE_REASON_TOKEN_REFUSED: REFUSED,
  CLOSE_REASON_NO_HELLO: FIX_CLIENT,
  CLOSE_REASON_FIELD_TOO_LONG: FIX_CLIENT,
  CLOSE_REASON_NOT_A_BOT_MESSAGE: FIX_CLIENT,
};
// With no reason (a server before it, uno-arena 0.1.0) or one this file does not know, the status
// code alone says it.
const FINAL_STATUS = {
  [grpc.status.UNAUTHENTICATED]: REFUSED,
  [grpc.status.INVALID_ARGUMENT]: FIX_CLIENT,
  [grpc.status.ABORTED]: REPLACED,
};

async function main() {
  const client = new BotService(options.server, options.credentials, {
    "grpc.keepalive_time_ms": 10000, // our own pings: the server allows one a second at most
    "grpc.keepalive_timeout_ms": 5000,
    "grpc.initial_reconnect_backoff_ms": 500, // gRPC's own backoff would grow to 120 s: keep it
    "grpc.max_reconnect_backoff_ms": 5000, //   in step with ours
    "grpc.max_receive_message_length": 64 * 1024 * 1024, // a reconnect resends whole matches
  });
  let backoff = 0.5;
  for (;;) {
    const { code, details, reason, welcomed } = await connectOnce(client);
    if (code === grpc.status.OK && draining) {
      log("every match finished: stopping");
      process.exit(0);
    }
    const final = FINAL[reason] || FINAL_STATUS[code]; // by the code: no reason, or one we do not know
    if (final) {
      console.error(`error: ${final}: ${grpc.status[code]} ${details}`);
      process.exit(1);
    }
    if (welcomed) backoff = 0.5;
    log(`connection ended (${grpc.status[code]}${reason ? ` ${reason}` : ""}: ${details})`);
    if (draining && running.size === 0) {
      log("no match left to finish: stopping");
      process.exit(0);
    }
    const wait = backoff * (0.5 + Math.random() / 2); // jitter, so that many bots do not retry in step
    log(`reconnecting in ${wait.toFixed(1)} s`);
    await sleep(wait);
    backoff = Math.min(backoff * 2, 5);
  }
}

// First Ctrl-C (or SIGTERM): ask the server for no new matches and finish the
// running ones; the server then ends the stream with OK. Second: stop now.
function onSignal() {
  if (draining) {
    log(`stopping now: ${plural(running.size)} will be forfeited`);
    if (call) call.cancel();
    process.exit(1);
  }
  draining = true;
  if (!call && running.size === 0) process.exit(0); // between connections, with nothing to finish
  log(`draining: finishing ${plural(running.size)} (Ctrl-C again to stop now)`);
  if (call) call.write({ drain: { reason: "Ctrl-C" } });
}
process.on("SIGINT", onSignal);
process.on("SIGTERM", onSignal);

main();
