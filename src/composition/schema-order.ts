// The rooms' modules, loaded in the order /openapi.json has always listed their schemas: each module
// registers its schemas as it loads (validation/schema-registry.ts), and the document lists them in
// that order. service.ts imports this first, so that building the service room by room
// (src/composition/) leaves /openapi.json byte for byte as it was.
import '../ai/history-answers.js';
import '../ai/index.js';
import '../api-keys/routes.js';
import '../artifacts/index.js';
import '../assets/index.js';
import '../console/server.js';
import '../mcp/server.js';
import '../oauth/index.js';
import '../otp/http/recording-routes.js';
import '../otp/http/routes.js';
import '../otp/runs/commands.js';
import '../platform/routes.js';
import '../rest/app.js';
import '../webhook-delivery/index.js';
