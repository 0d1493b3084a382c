export { type EditorSource, editorSourceMaxLength, parseEditorSource } from "./editor-source.js";
export { liquidFailure } from "./liquid-failure.js";
export { type PreprocessResult, preprocessTemplate } from "./preprocess.js";
export {
  type CompiledTemplate,
  createRenderer,
  defaultRenderLimits,
  parseTemplate,
  type RenderedTemplate,
  type Renderer,
  type RenderLimits,
  renderTemplate,
  type TemplateSource,
  validateTemplate,
} from "./renderer.js";
export { describeProblem, TemplateError, type TemplateErrorKind, type TemplatePart, type TemplateProblem } from "./template-error.js";
export { type RenderVariables, reservedNames, scopeOf } from "./variables.js";
