//! Constraint and `when` expressions, parsed once by evalexpr and evaluated against the
//! values of one (partial) point without building a map per evaluation.

use std::collections::HashMap;

use evalexpr::{Context, DefaultNumericTypes, EvalexprError, EvalexprResult, Node};
use results::Value;

type EValue = evalexpr::Value<DefaultNumericTypes>;

/// A parsed expression and the parameters it reads.
#[derive(Debug, Clone)]
pub(crate) struct Expr {
    pub text: String,
    node: Node<DefaultNumericTypes>,
    /// Indexes (into the space's distinct names) of the parameters read.
    pub params: Vec<usize>,
}

/// The longest expression accepted, in bytes.
pub const MAX_EXPR_LEN: usize = 1000;

/// The deepest nesting accepted: parentheses plus runs of prefix operators (`!`, `-`).
/// evalexpr parses and evaluates recursively, so without a bound a file could overflow the
/// stack (50,000 levels did) or take quadratic time.
pub const MAX_EXPR_DEPTH: usize = 32;

/// The deepest nesting of `text`: open parentheses plus the prefix operators in front.
fn nesting(text: &str) -> usize {
    let (mut depth, mut deepest, mut prefix_run) = (0usize, 0usize, 0usize);
    let mut after_operand = false;
    for c in text.chars() {
        match c {
            '(' => {
                depth += 1;
                after_operand = false;
            }
            ')' => {
                depth = depth.saturating_sub(1);
                prefix_run = 0;
                after_operand = true;
            }
            '!' | '-' if !after_operand => prefix_run += 1,
            c if c.is_whitespace() => {}
            c if c.is_alphanumeric() || c == '_' || c == '"' || c == '.' => {
                prefix_run = 0;
                after_operand = true;
            }
            _ => after_operand = false,
        }
        deepest = deepest.max(depth + prefix_run);
    }
    deepest
}

/// Why an expression could not be used.
pub(crate) enum ExprError {
    Parse(String),
    Unknown(String),
}

impl Expr {
    /// Parses `text`; every variable must be a parameter (in `names`) or a constant.
    pub fn parse(
        text: &str,
        names: &HashMap<String, usize>,
        constants: &HashMap<String, EValue>,
    ) -> Result<Expr, ExprError> {
        if text.len() > MAX_EXPR_LEN {
            return Err(ExprError::Parse(format!(
                "it is {} bytes long; expressions have at most {MAX_EXPR_LEN}",
                text.len()
            )));
        }
        let depth = nesting(text);
        if depth > MAX_EXPR_DEPTH {
            return Err(ExprError::Parse(format!(
                "it nests {depth} levels deep (parentheses and prefix operators); \
                 expressions have at most {MAX_EXPR_DEPTH}"
            )));
        }
        let node = evalexpr::build_operator_tree::<DefaultNumericTypes>(text)
            .map_err(|e| ExprError::Parse(e.to_string()))?;
        let mut params = Vec::new();
        for var in node.iter_read_variable_identifiers() {
            if let Some(&i) = names.get(var) {
                if !params.contains(&i) {
                    params.push(i);
                }
            } else if !constants.contains_key(var) {
                return Err(ExprError::Unknown(var.to_string()));
            }
        }
        // Assignments would let a constraint change the point it judges.
        if node.iter_write_variable_identifiers().next().is_some() {
            return Err(ExprError::Parse(
                "assignments are not allowed in expressions".into(),
            ));
        }
        Ok(Expr {
            text: text.to_string(),
            node,
            params,
        })
    }

    /// Evaluates to a boolean; `Err` carries evalexpr's message or says what else came out.
    pub fn eval(&self, env: &Env<'_>) -> Result<bool, String> {
        match self.node.eval_with_context(env) {
            Ok(EValue::Boolean(b)) => Ok(b),
            Ok(other) => Err(format!("is not boolean: it evaluates to {other}")),
            Err(e) => Err(format!("cannot be evaluated: {e}")),
        }
    }
}

/// Converts a point value for evalexpr.
pub(crate) fn to_evalexpr(v: &Value) -> EValue {
    match v {
        Value::Int(i) => EValue::Int(*i),
        Value::Text(t) => EValue::String(t.clone()),
    }
}

/// Variables for evaluation: the current values of the parameters (by name index) and the
/// constants.
pub(crate) struct Env<'a> {
    pub names: &'a HashMap<String, usize>,
    pub values: &'a [Option<EValue>],
    pub constants: &'a HashMap<String, EValue>,
}

impl Context for Env<'_> {
    type NumericTypes = DefaultNumericTypes;

    fn get_value(&self, identifier: &str) -> Option<&EValue> {
        match self.names.get(identifier) {
            Some(&i) => self.values.get(i).and_then(Option::as_ref),
            None => self.constants.get(identifier),
        }
    }

    fn call_function(&self, identifier: &str, _argument: &EValue) -> EvalexprResult<EValue> {
        Err(EvalexprError::FunctionIdentifierNotFound(
            identifier.to_string(),
        ))
    }

    fn are_builtin_functions_disabled(&self) -> bool {
        false
    }

    fn set_builtin_functions_disabled(&mut self, disabled: bool) -> EvalexprResult<()> {
        if disabled {
            Err(EvalexprError::BuiltinFunctionsCannotBeDisabled)
        } else {
            Ok(())
        }
    }
}
